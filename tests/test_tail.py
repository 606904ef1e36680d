"""Reading files once and following them like ``tail -F``."""

from __future__ import annotations

from queries.ingest.tail import Follower, file_id, find_file, head_digest, read_range


def test_read_range_streams_lines_with_offsets(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"one\ntwo\nlast without newline")
    with path.open("rb") as handle:
        assert list(read_range(handle, 0, 28)) == [(b"one\n", 4), (b"two\n", 8),
                                                    (b"last without newline", 28)]
        assert list(read_range(handle, 4, 8)) == [(b"two\n", 8)]
        assert list(read_range(handle, 8, 99)) == [(b"last without newline", 28)]


def test_find_file_follows_a_rename_and_checks_the_first_line(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"first\n")
    fid = file_id(path)
    with path.open("rb") as handle:
        head = head_digest(handle)
    path.rename(tmp_path / "a.log.1")
    path.write_bytes(b"first\n")                      # same content, another inode
    found = find_file(str(path), fid.device, fid.inode, head)
    assert found.name == str(tmp_path / "a.log.1")
    found.close()
    assert find_file(str(path), fid.device, fid.inode, "other head") is None
    (tmp_path / "a.log.1").unlink()
    assert find_file(str(path), fid.device, fid.inode, head) is None


def test_follower_waits_for_a_whole_line(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"one\ntw")
    follower = Follower(path)
    assert follower.read() == [b"one\n"] and follower.offset == 4
    assert follower.read() == []
    with path.open("ab") as handle:
        handle.write(b"o\n")
    assert follower.read() == [b"two\n"] and follower.offset == 8
    follower.close()


def test_follower_survives_rename_and_create(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"1\n")
    follower = Follower(path)
    first = follower.id
    assert follower.read() == [b"1\n"]
    path.rename(tmp_path / "a.log.1")
    assert follower.read() == []                     # the path is missing for a moment
    with (tmp_path / "a.log.1").open("ab") as handle:
        handle.write(b"2\n3")                        # the old file's last, unfinished line
    path.write_bytes(b"4\n")
    assert follower.read() == [b"2\n"]
    assert follower.read() == [b"3"]                # the old file's rest, unfinished too
    assert follower.id == first and follower.offset == 5
    assert follower.read() == [b"4\n"]              # then the new file: one file per read
    assert follower.id != first and follower.id == file_id(path) and follower.offset == 2
    follower.close()


def test_follower_restarts_a_truncated_file_and_a_too_far_offset(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"aaaa\nbbbb\n")
    follower = Follower(path)
    assert len(follower.read()) == 2
    path.write_bytes(b"c\n")                          # copytruncate, then a new line
    assert follower.read() == [b"c\n"]
    follower.close()
    assert Follower(path, offset=999).offset == 0
    resumed = Follower(path)
    resumed.seek(2)                                   # a saved position
    path.write_bytes(b"c\nd\n")
    assert resumed.size() == 4 and resumed.read() == [b"d\n"] and resumed.offset == 4
    resumed.close()


def test_head_digest_tells_files_apart(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"first\nsecond\n")
    b.write_bytes(b"other\nsecond\n")
    with a.open("rb") as ha, b.open("rb") as hb:
        assert head_digest(ha) != head_digest(hb) and head_digest(ha)
    a.write_bytes(b"unfinished")
    with a.open("rb") as ha:
        assert head_digest(ha) == ""
