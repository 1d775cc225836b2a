"""What this build was compiled with, as Paddle's `is_compiled_with_cuda` tells scripts."""


def is_compiled_with_cuda() -> bool:
    """False: this build runs its kernels on the CPU (scripts branch on it to pick their place)."""
    return False
