"""`Program.clone`: a copy made by the JSON round trip, so a copy is exactly what a saved program
loads as. It needs `serialize` and `prune`, which import `program`, so `ir/__init__` attaches it
to `Program` rather than `program` importing them back."""

from __future__ import annotations

from .program import Program
from .prune import keep_forward_for_test
from .serialize import program_from_dict, program_to_dict


def clone_program(program: Program, for_test: bool = False) -> Program:
    """An exact copy. `for_test=True` keeps only the forward ops and switches ops to test mode."""
    p = program_from_dict(program_to_dict(program), _keep_param_attrs_from=program)
    p.lr_scheduler = program.lr_scheduler
    return keep_forward_for_test(p) if for_test else p
