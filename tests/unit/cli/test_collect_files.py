"""Which files of a folder a run sends: hidden ones and types no parser reads stay out, and are said."""

from services.cli.documents import collect_files, skipped_line


def test_a_folder_sends_what_a_parser_reads_and_lists_the_rest(tmp_path):
    for name in ("a.md", "b.CSV", "img/diagram.png", "img/photo.JPG", "LICENSE", ".hidden.md", ".git/config"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    skipped: list[str] = []
    assert [uri for _, uri in collect_files([str(tmp_path)], skipped)] == ["a.md", "b.CSV"]
    assert skipped == ["LICENSE", "img/diagram.png", "img/photo.JPG"]
    line = skipped_line(skipped, shown=2)
    assert line == (
        "skipped 3 files of a type no parser reads ((no extension), .jpg, .png): LICENSE, img/diagram.png and 1 more"
    )
    assert skipped_line([]) == ""


def test_a_file_named_on_its_own_is_always_sent(tmp_path):
    (tmp_path / "scan.png").write_bytes(b"x")
    assert [uri for _, uri in collect_files([str(tmp_path / "scan.png")])] == ["scan.png"]
