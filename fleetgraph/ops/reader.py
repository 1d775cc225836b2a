"""Reader ops: create_py_reader, create_double_buffer_reader and read, which feed a program from a DataLoader."""

from __future__ import annotations
