"""The `fleetgraph` command line: `inspect` a saved program, `diff` two, `transpile` one into every
role's programs."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence

from .inspect.graph import diff, program_to_dot, to_dot
from .inspect.svg import program_to_svg
from .ir import FleetgraphError, Program, op_summary
from .ir.serialize import program_from_dict


class CliError(Exception):
    """A problem with the command's input: printed as one line, exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; 0 on success, 2 (with one line on stderr) when the input is at fault."""
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except (CliError, FleetgraphError, OSError, ValueError) as e:
        message = str(e).removeprefix(f"{args.command}: ")  # the transpiler's errors name it too
        print(f"fleetgraph {args.command}: {message}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fleetgraph", description=__doc__)
    parser.add_argument("--version", action="version", version=f"fleetgraph {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_inspect(commands)
    _add_diff(commands)
    _add_transpile(commands)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fleetgraph")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


# -- diff ---------------------------------------------------------------------------------------


def _add_diff(commands) -> None:
    p = commands.add_parser("diff", help="what program B adds, removes and changes relative to program A")
    p.add_argument("before", metavar="A.json")
    p.add_argument("after", metavar="B.json")
    p.set_defaults(run=_diff)


def _diff(args: argparse.Namespace) -> int:
    """Prints the differences block by block (+ added, - removed, ~ changed ops and variables);
    exit status 0 when the programs are equal, 1 when they differ, as diff(1)."""
    changes = diff(_load(args.before), _load(args.after))
    print(changes)
    return 1 if changes else 0


# -- inspect ------------------------------------------------------------------------------------


def _add_inspect(commands) -> None:
    p = commands.add_parser("inspect", help="print a program, its op summary, or draw it")
    p.add_argument("program", metavar="PROGRAM.json")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--summary", action="store_true", help="one line of op types per block")
    what.add_argument("--dot", metavar="FILE", help="write Graphviz DOT text ('-' for stdout)")
    what.add_argument(
        "--svg", metavar="FILE", help="draw an SVG: with Graphviz's dot when on PATH, else with fast-sugiyama's layout"
    )
    p.add_argument("--block", type=int, metavar="N", help="only block N")
    p.set_defaults(run=_inspect)


def _inspect(args: argparse.Namespace) -> int:
    program = _load(args.program)
    if args.block is not None and not 0 <= args.block < program.num_blocks:
        raise CliError(f"--block: expected 0..{program.num_blocks - 1}, got {args.block}")
    if args.summary:
        print(_summary(program, args.block))
    elif args.dot or args.svg:
        text = program_to_dot(program) if args.block is None else to_dot(program.block(args.block))
        if args.dot:
            _write_text(text, args.dot)
        elif shutil.which("dot") is not None:
            _write_svg(text, args.svg)
        else:
            _write_text(program_to_svg(program, args.block), args.svg)
    else:
        print(program.to_string() if args.block is None else program.block(args.block).to_string())
    return 0


def _summary(program: Program, block: int | None) -> str:
    lines = op_summary(program).splitlines()
    return "\n".join(lines) if block is None else lines[block]


def _write_text(text: str, path: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {path}")


def _write_svg(text: str, path: str) -> None:
    done = subprocess.run(
        [shutil.which("dot") or "dot", "-Tsvg", "-o", path], input=text, text=True, capture_output=True
    )
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["no message"])[0]
        raise CliError(f"dot -Tsvg: exited with status {done.returncode}: {first}")
    print(f"wrote {path}")


def _load(path: str) -> Program:
    """A program from a saved program's JSON, a saved inference model (its directory, or its
    model.json) or an ONNX model (.onnx), with every way a file can be wrong turned into one line."""
    if path.endswith(".onnx"):
        return _load_onnx(path)
    if os.path.isdir(path):
        path = _model_file(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, dict) and "program" in data and "feed_names" in data:
            data = data["program"]
        return program_from_dict(data)
    except OSError as e:
        raise CliError(f"cannot read {path!r}: {e.strerror or e}") from None
    except FleetgraphError as e:
        raise CliError(f"{path}: {e}") from None
    except UnicodeDecodeError:
        raise CliError(f"{path}: not a JSON file (not UTF-8 text)") from None
    except json.JSONDecodeError as e:
        raise CliError(f"{path}: not a JSON file ({e})") from None
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        raise CliError(f"{path}: not a fleetgraph program JSON file ({type(e).__name__}: {e})") from None


def _model_file(directory: str) -> str:
    """The program file of a saved inference model's directory (save_inference_model's model.json)."""
    from .store.persistence import MODEL_FILE

    path = os.path.join(directory, MODEL_FILE)
    if os.path.exists(path):
        return path
    found = sorted(name for name in os.listdir(directory) if name.endswith(".json"))
    if len(found) == 1:
        return os.path.join(directory, found[0])
    raise CliError(
        f"{directory}: expected a saved inference model directory holding {MODEL_FILE}, got "
        + (f"{len(found)} JSON files ({', '.join(found)})" if found else "no JSON file")
    )


def _load_onnx(path: str) -> Program:
    try:
        from .onnx import load
    except ImportError as e:
        raise CliError(f"{path}: reading ONNX needs fleetgraph.onnx and the onnx package ({e})") from None
    if not os.path.exists(path):
        raise CliError(f"cannot read {path!r}: No such file or directory")
    try:
        program, _scope, _feeds, _fetches = load(path)
    except (FleetgraphError, OSError, ValueError) as e:
        raise CliError(f"{path}: {e}") from None
    except Exception as e:  # the onnx package's own parse errors (google.protobuf's DecodeError ...)
        raise CliError(f"{path}: not a readable ONNX model ({type(e).__name__}: {e})") from None
    return program


# -- transpile ----------------------------------------------------------------------------------


def _add_transpile(commands) -> None:
    p = commands.add_parser("transpile", help="write each trainer's and pserver's programs")
    p.add_argument("program", metavar="PROGRAM.json")
    p.add_argument("--startup", metavar="STARTUP.json", help="default: startup.json next to PROGRAM.json")
    p.add_argument("--pservers", metavar="IP:PORT,...", help="pserver endpoints (pserver mode)")
    p.add_argument("--trainers", type=int, metavar="N", help="number of trainers (pserver mode)")
    p.add_argument("--mode", choices=("pserver", "collective"), default="pserver")
    p.add_argument("--endpoints", metavar="IP:PORT,...", help="one endpoint per rank (collective mode)")
    sync = p.add_mutually_exclusive_group()
    sync.add_argument("--sync", dest="sync", action="store_const", const="sync", help="synchronous (default)")
    sync.add_argument("--async", dest="sync", action="store_const", const="async")
    sync.add_argument("--half-async", dest="sync", action="store_const", const="half_async")
    sync.add_argument("--geo", type=int, metavar="K", help="GEO-SGD, pushing every K steps")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--html", metavar="FILE", help="also write one self-contained HTML page of every role and the plan")
    p.set_defaults(run=_transpile, sync="sync")


def _transpile(args: argparse.Namespace) -> int:
    startup_path = _startup_path(args)
    _config(args)  # fail before anything is written
    for path in (args.program, startup_path):
        _load(path)  # fail early, naming the file
    run = _transpile_collective if args.mode == "collective" else _transpile_pserver
    print("\n".join(run(args, startup_path)))
    return 0


def _startup_path(args: argparse.Namespace) -> str:
    if args.startup:
        return args.startup
    beside = os.path.join(os.path.dirname(os.path.abspath(args.program)), "startup.json")
    if not os.path.exists(beside):
        raise CliError(f"no startup program; expected --startup FILE or {beside}, got neither")
    return beside


def _config(args: argparse.Namespace):
    from .transpiler import DistributeTranspilerConfig

    config = DistributeTranspilerConfig()
    config.mode = args.mode
    config.sync_mode = args.sync == "sync" and args.geo is None
    config.half_async = args.sync == "half_async"
    config.runtime_split_send_recv = args.sync == "async" and args.geo is None
    config.geo_sgd_mode = args.geo is not None
    if args.geo is not None:
        if args.geo < 1:
            raise CliError(f"--geo: expected a number of steps >= 1, got {args.geo}")
        config.geo_sgd_need_push_nums = args.geo
    return config


def _run_transpile(args, startup_path: str, trainer_id: int, pservers: str, trainers, current_endpoint: str):
    """A fresh transpiler over freshly loaded programs, so no role sees another role's rewrite."""
    from .transpiler import DistributeTranspiler

    config = _config(args)
    t = DistributeTranspiler(config=config)
    main, startup = _load(args.program), _load(startup_path)
    t.transpile(
        trainer_id,
        program=main,
        pservers=pservers,
        trainers=trainers,
        sync_mode=config.sync_mode,
        startup_program=startup,
        current_endpoint=current_endpoint,
    )
    return t


def _transpile_pserver(args: argparse.Namespace, startup_path: str) -> list[str]:
    if not args.pservers:
        raise CliError("pserver mode: expected --pservers IP:PORT,..., got none")
    if args.trainers is None or args.trainers < 1:
        raise CliError(f"pserver mode: expected --trainers N >= 1, got {args.trainers}")
    t = _run_transpile(args, startup_path, 0, args.pservers, args.trainers, "")
    return _write(args, t)


def _transpile_collective(args: argparse.Namespace, startup_path: str) -> list[str]:
    endpoints = [e.strip() for e in (args.endpoints or "").split(",") if e.strip()]
    if not endpoints:
        raise CliError("collective mode: expected --endpoints IP:PORT,... (one per rank), got none")
    if args.trainers is not None and args.trainers != len(endpoints):
        raise CliError(f"collective mode: expected --trainers {len(endpoints)} (one per endpoint), got {args.trainers}")
    t = _run_transpile(args, startup_path, 0, "", ",".join(endpoints), endpoints[0])
    return _write(args, t)


def _write(args: argparse.Namespace, t) -> list[str]:
    """Every role's programs, the plan and the summary under --out, and the report at --html."""
    from .transpiler.dump import transpile_roles, write_roles

    return write_roles(args.out, transpile_roles(t, t.config.sync_mode), t.plan, html=args.html)
