"""Files through the synchronous client against a live server: text and
bytes, streamed uploads and downloads of a few MB, stat, list, mkdir,
rename and remove."""

from __future__ import annotations

import hashlib
import io
from typing import Iterator

import pytest

from conftest import Runtime, unique
from paddock import FileStream, Paddock, PaddockError, models

MB = 1 << 20


def pattern(total: int, chunk: int = 64 * 1024) -> Iterator[bytes]:
    """total bytes that are not all alike, in chunks."""
    for start in range(0, total, chunk):
        n = min(chunk, total - start)
        yield bytes((start + i * 7) % 251 for i in range(n))


def test_text_and_bytes_round_trip(client: Paddock, runtime: Runtime) -> None:
    d = "/tmp/" + unique("files")
    info = client.write_file(runtime.org, runtime.ws, runtime.id, d + "/note.txt", "héllo, wörld\n")
    assert isinstance(info, models.FileInfo)
    assert (info.type, info.size, info.name) == ("file", len("héllo, wörld\n".encode()), "note.txt")
    assert client.read_text(runtime.org, runtime.ws, runtime.id, d + "/note.txt") == "héllo, wörld\n"
    blob = bytes(range(256)) * 4
    client.write_file(runtime.org, runtime.ws, runtime.id, d + "/blob.bin", blob, mode=0o600)
    assert client.read_file(runtime.org, runtime.ws, runtime.id, d + "/blob.bin") == blob
    assert client.read_file(runtime.org, runtime.ws, runtime.id, d + "/blob.bin", offset=10, length=5) == blob[10:15]
    st = client.stat_file(runtime.org, runtime.ws, runtime.id, d + "/blob.bin")
    assert (st.size, st.mode) == (len(blob), 0o600)
    # What the API wrote, the sandbox sees.
    r = client.exec(runtime.org, runtime.ws, runtime.id, ["cat", d + "/note.txt"])
    assert r.stdout.decode() == "héllo, wörld\n"


def test_a_few_mb_stream_both_ways(client: Paddock, runtime: Runtime) -> None:
    path = "/tmp/" + unique("big") + "/data.bin"
    size = 6 * MB + 123
    want = hashlib.sha256(b"".join(pattern(size))).hexdigest()
    info = client.write_file(runtime.org, runtime.ws, runtime.id, path, pattern(size))
    assert info.size == size
    r = client.exec(runtime.org, runtime.ws, runtime.id, ["sha256sum", path])
    assert r.stdout.split()[0].decode() == want
    got = hashlib.sha256()
    chunks = 0
    with client.open_file(runtime.org, runtime.ws, runtime.id, path, chunk_size=256 * 1024) as f:
        assert isinstance(f, FileStream)
        assert f.size == size
        for chunk in f:
            got.update(chunk)
            chunks += 1
    assert got.hexdigest() == want
    assert chunks > 1


def test_upload_from_a_file_object(client: Paddock, runtime: Runtime) -> None:
    path = "/tmp/" + unique("fileobj") + ".bin"
    data = b"".join(pattern(MB + 5))
    client.write_file(runtime.org, runtime.ws, runtime.id, path, io.BytesIO(data))
    assert client.open_file(runtime.org, runtime.ws, runtime.id, path).read() == data


def test_mkdir_list_rename_and_remove(client: Paddock, runtime: Runtime) -> None:
    d = "/tmp/" + unique("tree")
    made = client.mkdir(runtime.org, runtime.ws, runtime.id, d + "/a/b")
    assert made.type == "directory"
    client.write_file(runtime.org, runtime.ws, runtime.id, d + "/a/one.txt", "1")
    client.write_file(runtime.org, runtime.ws, runtime.id, d + "/a/b/two.txt", "22")
    flat = client.list_files(runtime.org, runtime.ws, runtime.id, d + "/a")
    assert sorted(f.name for f in flat.items) == ["b", "one.txt"] and not flat.truncated
    deep = client.list_files(runtime.org, runtime.ws, runtime.id, d, recursive=True)
    assert {f.path for f in deep.items} >= {d + "/a", d + "/a/b", d + "/a/one.txt", d + "/a/b/two.txt"}
    moved = client.rename(runtime.org, runtime.ws, runtime.id, d + "/a/one.txt", d + "/a/b/one.txt")
    assert moved.path == d + "/a/b/one.txt"
    with pytest.raises(PaddockError) as e:
        client.stat_file(runtime.org, runtime.ws, runtime.id, d + "/a/one.txt")
    assert (e.value.status, e.value.code) == (404, "file_not_found")
    with pytest.raises(PaddockError) as e:
        client.write_file(runtime.org, runtime.ws, runtime.id, d + "/a/b/two.txt", "x", no_overwrite=True)
    assert (e.value.status, e.value.code) == (409, "file_exists")
    with pytest.raises(PaddockError) as e:
        client.delete_file(runtime.org, runtime.ws, runtime.id, d + "/a")
    assert (e.value.status, e.value.code) == (422, "directory_not_empty")
    client.delete_file(runtime.org, runtime.ws, runtime.id, d, recursive=True)
    with pytest.raises(PaddockError) as e:
        client.list_files(runtime.org, runtime.ws, runtime.id, d)
    assert e.value.status == 404


def test_reading_a_missing_file_is_an_error(client: Paddock, runtime: Runtime) -> None:
    for read in (client.read_file, client.open_file):
        with pytest.raises(PaddockError) as e:
            read(runtime.org, runtime.ws, runtime.id, "/tmp/no/such/file")
        assert (e.value.status, e.value.code) == (404, "file_not_found")
    with pytest.raises(PaddockError) as e:
        client.read_file(runtime.org, runtime.ws, runtime.id, "relative/path")
    assert (e.value.status, e.value.code) == (400, "invalid_path")
