"""Archives the dataset tests write: a tar of named byte payloads, in the members' order."""

import io
import tarfile


def write_tar(path, members: dict[str, bytes], mode: str = "w") -> str:
    """members: name -> payload; mode 'w' (plain tar) or 'w:gz'. Returns the path as a str."""
    with tarfile.open(path, mode) as tar:
        for name, payload in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    return str(path)
