"""esrally.utils.io: the path helpers tracks use."""

import os


def ensure_dir(directory, mode=0o777):
    if directory:
        os.makedirs(directory, mode, exist_ok=True)


def normalize_path(path, cwd="."):
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    return os.path.normpath(path)


def escape_path(path):
    return path.replace("\\", "\\\\")


def basename(path):
    return os.path.basename(os.path.normpath(path))


def dirname(path):
    return os.path.dirname(os.path.normpath(path))


def has_extension(path, extension):
    return os.path.splitext(path)[1] == extension


def splitext(file_name):
    for ext in (".tar.gz", ".tar.bz2", ".tar.zst"):
        if file_name.endswith(ext):
            return file_name[: -len(ext)], ext
    return os.path.splitext(file_name)
