"""`get_flags`/`set_flags`: the global FLAGS_* fleetgraph reads, as Paddle's gflags.

fleetgraph reads its flags from the environment when it uses them (the launcher passes them to
child processes the same way), so a flag set here reaches both this process and the ones it starts.
A flag fleetgraph does not read is refused, as Paddle refuses a flag it does not define.
"""

from __future__ import annotations

import os


def _cpu_num() -> int:
    return int(os.getenv("CPU_NUM", "1"))


# flag -> (its default, or a function giving it, and its type): the FLAGS_* fleetgraph reads
FLAGS: dict[str, tuple[object, type]] = {
    "FLAGS_selected_gpus": ("", str),  # the launcher's per-process GPU list
    # the parameter-server strategy's settings (DistributedStrategy reads them as Paddle's does)
    "FLAGS_communicator_send_queue_size": (_cpu_num, int),
    "FLAGS_communicator_max_merge_var_num": (_cpu_num, int),
    "FLAGS_communicator_min_send_grad_num_before_recv": (_cpu_num, int),
    "FLAGS_communicator_independent_recv_thread": (True, bool),
    "FLAGS_communicator_thread_pool_size": (5, int),
    "FLAGS_communicator_send_wait_times": (5, int),
    "FLAGS_communicator_is_sgd_optimizer": (True, bool),
    "FLAGS_rpc_send_thread_num": (12, int),
    "FLAGS_rpc_get_thread_num": (12, int),
    "FLAGS_rpc_prefetch_thread_num": (12, int),
}


def _known(name: str) -> str:
    if name not in FLAGS:
        raise ValueError(f"Flag {name} cannot set its value through this function: fleetgraph reads no such flag")
    return name


def _parse(name: str, text: str):
    kind = FLAGS[name][1]
    if kind is bool:
        return text.strip().lower() in ("1", "true", "yes")
    return kind(text)


def get_flags(flags) -> dict:
    """{flag: value} for a flag name or a list/tuple of them."""
    if isinstance(flags, str):
        flags = [flags]
    if not isinstance(flags, (list, tuple)):
        raise TypeError(f"Flags in get_flags should be a list, tuple or string, but received {type(flags)}")
    return {name: _value(name) for name in map(_known, flags)}


def _value(name: str):
    if name in os.environ:
        return _parse(name, os.environ[name])
    default = FLAGS[name][0]
    return default() if callable(default) else default


def set_flags(flags: dict) -> None:
    """Set each flag of the dict (into the environment, where fleetgraph reads it)."""
    if not isinstance(flags, dict):
        raise TypeError(f"flags in set_flags should be a dict, but received {type(flags)}")
    for name, value in flags.items():
        kind = FLAGS[_known(name)][1]
        if kind is bool:
            value = bool(value)
        elif not isinstance(value, kind) or isinstance(value, bool):
            raise TypeError(f"set_flags: {name}; expected a {kind.__name__}, got {value!r}")
        os.environ[name] = str(value).lower() if kind is bool else str(value)
