"""`fluid.distribute_lookup_table`: find the table a program's distributed lookups read, and their
inputs and outputs, as Paddle's (one distributed table per program)."""

LOOKUP_TABLE_TYPE = "lookup_table"


def _lookups(program, table_name):
    return [op for op in program.global_block().ops if op.type == LOOKUP_TABLE_TYPE and op.input("W")[0] == table_name]


def find_distributed_lookup_table_inputs(program, table_name):
    local = program.current_block().vars
    return [local[name] for op in _lookups(program, table_name) for name in op.input("Ids")]


def find_distributed_lookup_table_outputs(program, table_name):
    local = program.current_block().vars
    return [local[name] for op in _lookups(program, table_name) for name in op.output("Out")]


def find_distributed_lookup_table(program):
    """The W of the program's lookup_table ops with is_distributed=True (None if there are none); two
    different distributed tables, or a table looked up both ways, is an error."""
    table_name = None
    local = set()
    for op in program.global_block().ops:
        if op.type != LOOKUP_TABLE_TYPE:
            continue
        w = op.input("W")[0]
        if not op.attrs.get("is_distributed"):
            local.add(w)
            continue
        if table_name is not None and w != table_name:
            raise RuntimeError("all distributed lookup_table_ops should have only one table")
        table_name = w
    if table_name in local:
        raise RuntimeError(f"table {table_name!r} is looked up both as a distributed and as a local table")
    return table_name
