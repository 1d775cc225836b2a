"""`paddle.distributed.fs_wrapper.LocalFS` (Fluid 1.8's collective fleet saves checkpoints through it):
a few filesystem operations on local paths."""

from __future__ import annotations

import os
import shutil


class LocalFS:
    def list_dirs(self, fs_path: str) -> list[str]:
        """The names of the directories in fs_path ([] when it does not exist)."""
        if not self.stat(fs_path):
            return []
        return [f for f in os.listdir(fs_path) if os.path.isdir(os.path.join(fs_path, f))]

    def ls_dir(self, fs_path: str) -> list[str]:
        return list(os.listdir(fs_path))

    def stat(self, fs_path: str) -> bool:
        return os.path.exists(fs_path)

    def mkdir(self, fs_path: str) -> None:
        if os.path.isfile(fs_path):
            raise FileExistsError(f"LocalFS.mkdir: {fs_path} is already a file")
        os.makedirs(fs_path, exist_ok=True)

    def mv(self, fs_src_path: str, fs_dst_path: str) -> None:
        os.rename(fs_src_path, fs_dst_path)

    def rmr(self, fs_path: str) -> None:
        shutil.rmtree(fs_path)

    def rm(self, fs_path: str) -> None:
        os.remove(fs_path)

    def delete(self, fs_path: str) -> None:
        """Remove a file or a directory tree; nothing when it does not exist."""
        if not self.stat(fs_path):
            return
        if os.path.isfile(fs_path):
            self.rm(fs_path)
        else:
            self.rmr(fs_path)

    def need_upload_download(self) -> bool:
        return False
