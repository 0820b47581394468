"""Download and verify the data files of the real-data experiments.

Each file is described by a :class:`DataFile` spec (it comes from the config): its path
relative to the data directory, the URLs to try (official first) and its checksums.
:func:`fetch_file` tries every URL, then a local mirror directory (argument, then the
``VHCT_DATA_MIRROR`` environment variable), verifies what it got and moves it into place
atomically. When no source yields a verified file it raises :class:`DownloadError` naming
the file, every source tried with the reason it failed, and how to use a mirror. A failed
fetch leaves nothing behind.

Checksums: ``sha256`` and ``md5`` are of the file bytes; ``content_sha256`` (``.gz`` files
only) is of the decompressed bytes, because mirrors recompress gzip files while keeping
their content. A file passes when at least one declared checksum matches; a ``.gz`` file
must also decompress completely (a truncated or corrupted gzip never passes).

A file is verified before it is used, not only when it is fetched: :func:`write_stamp`
writes the verification stamp of a verified file (rule ``verify_data``: its path, size, the
sha256 of its bytes and the checksums of its spec) and :func:`check_stamp` checks the file
against it, by content, before a run reads it. Hashing is skipped only when the file's stat
(size, modification and change times, inode, device) equals the one recorded beside the stamp
(``<stamp>.stat``) together with a sha256 equal to the stamp's; any other file is hashed again
and must have the stamp's sha256 and match its spec. Why the change time: an edit in place
with its size kept and its modification time put back (``touch -r``, ``os.utime``) sets the
inode's change time to the present, which no user can set back (only a change of the system
clock or raw disk access can), and a file replaced by another gets another inode; a
modification time alone is not evidence. Downloaded files are created like any normal file
(their mode follows the umask), never with ``mkstemp``'s private mode 0600.

Modules, one job each: ``spec`` (:class:`DataFile`, the data directory), ``verify`` (digests and
checksums), ``fetch`` (URLs, mirrors, :class:`DownloadError`), ``stamp`` (the verification stamp).
"""

from vhct.pipeline.data.fetch import (
    DEFAULT_TIMEOUT,
    MIRROR_CONFIG_KEY,
    MIRROR_ENV,
    DownloadError,
    fetch_file,
    mirror_dirs,
    mirror_problem,
)
from vhct.pipeline.data.spec import (
    DATA_DIR,
    DIGEST_LENGTHS,
    GZIP_SUFFIX,
    SPEC_KEYS,
    URL_SCHEMES,
    DataFile,
    as_data_file,
    inside_data_dir,
)
from vhct.pipeline.data.stamp import STAT_FIELDS, STAT_SUFFIX, Stamp, check_stamp, write_stamp
from vhct.pipeline.data.verify import CHUNK_SIZE, VerificationError, compute_digests, verify_file

__all__ = [
    "CHUNK_SIZE",
    "DATA_DIR",
    "DEFAULT_TIMEOUT",
    "DIGEST_LENGTHS",
    "GZIP_SUFFIX",
    "MIRROR_CONFIG_KEY",
    "MIRROR_ENV",
    "SPEC_KEYS",
    "STAT_FIELDS",
    "STAT_SUFFIX",
    "URL_SCHEMES",
    "DataFile",
    "DownloadError",
    "Stamp",
    "VerificationError",
    "as_data_file",
    "check_stamp",
    "compute_digests",
    "fetch_file",
    "inside_data_dir",
    "mirror_dirs",
    "mirror_problem",
    "verify_file",
    "write_stamp",
]
