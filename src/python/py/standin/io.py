"""Rally's io helpers tracks use: path helpers, and the file sources a reader opens."""

import mmap
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


def is_archive(name):
    return splitext(name)[1] in (".zip", ".bz2", ".gz", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".zst")


def splitext(file_name):
    for ext in (".tar.gz", ".tar.bz2", ".tar.zst"):
        if file_name.endswith(ext):
            return file_name[: -len(ext)], ext
    return os.path.splitext(file_name)


class FileSource:
    """A file read line by line (Rally's plain source)."""

    def __init__(self, file_name, mode, encoding="utf-8"):
        self.file_name = file_name
        self.mode = mode
        self.encoding = encoding
        self.f = None

    def open(self):
        self.f = open(self.file_name, mode=self.mode)
        return self

    def seek(self, offset):
        self.f.seek(offset)

    def read(self):
        return self.f.read()

    def readline(self):
        return self.f.readline()

    def readlines(self, num_lines):
        lines = []
        for _ in range(num_lines):
            line = self.readline()
            if not line:
                break
            lines.append(line)
        return lines

    def close(self):
        self.f.close()
        self.f = None

    def __enter__(self):
        return self.open()

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False

    def __str__(self):
        return self.file_name


class MmapSource(FileSource):
    """A file read through a read-only memory map, as bytes (Rally's source for corpora)."""

    def __init__(self, file_name, mode, encoding="utf-8"):
        super().__init__(file_name, mode, encoding)
        self.mm = None

    def open(self):
        self.f = open(self.file_name, mode="rb")
        self.mm = mmap.mmap(self.f.fileno(), 0, access=mmap.ACCESS_READ)
        return self

    def seek(self, offset):
        self.mm.seek(offset)

    def read(self):
        return self.mm.read()

    def readline(self):
        return self.mm.readline()

    def close(self):
        self.mm.close()
        self.mm = None
        super().close()


class StringAsFileSource(FileSource):
    """Lines given as a list, read as a file (Rally's test helper, which tracks' tests use)."""

    def __init__(self, contents, mode, encoding="utf-8"):
        super().__init__("<string>", mode, encoding)
        self.contents = contents
        self.current_index = 0

    def open(self):
        return self

    def seek(self, offset):
        if offset != 0:
            raise AssertionError("StringAsFileSource supports only seeking to the start")
        self.current_index = 0

    def read(self):
        return "\n".join(self.contents[self.current_index:])

    def readline(self):
        if self.current_index >= len(self.contents):
            return ""
        line = self.contents[self.current_index]
        self.current_index += 1
        return line

    def readlines(self, num_lines):
        lines = self.contents[self.current_index:self.current_index + num_lines]
        self.current_index += len(lines)
        return lines

    def close(self):
        self.contents = None
