"""``harness commute-stand-in-images``: one labelled, distinct image per name of img.order."""

from __future__ import annotations

from harness.cli import main


def commute_folder(root, orders):
    for lang, names in orders.items():
        folder = root / f"en-{lang}"
        folder.mkdir(parents=True)
        (folder / "img.order").write_text("\n".join(names))  # no trailing newline, as the real files
    return root


def test_writes_each_name_once_distinct_and_keeps_existing_files(tmp_path, capsys):
    from PIL import Image

    data = commute_folder(tmp_path / "commute", {"fr": ["a.jpg", "b.jpg", "a.jpg"], "de": ["b.jpg", "c.png"]})
    out = tmp_path / "images"
    assert main(["commute-stand-in-images", "--data-dir", str(data), "--output", str(out)]) == 0
    assert "wrote 3 stand-in images" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["a.jpg", "b.jpg", "c.png"]
    pixels = {p.name: Image.open(p).convert("RGB").tobytes() for p in out.iterdir()}
    assert len(set(pixels.values())) == 3  # every image differs from the others
    assert main(["commute-stand-in-images", "--data-dir", str(data), "--lang", "de", "--output", str(out)]) == 0
    assert "wrote 0 stand-in images to" in capsys.readouterr().out


def test_only_one_language_and_unsafe_names(tmp_path, capsys):
    data = commute_folder(tmp_path / "commute", {"fr": ["a.jpg"], "cs": ["../escape.jpg"]})
    assert (
        main(["commute-stand-in-images", "--data-dir", str(data), "--lang", "fr", "--output", str(tmp_path / "o")]) == 0
    )
    assert [p.name for p in (tmp_path / "o").iterdir()] == ["a.jpg"]
    assert (
        main(["commute-stand-in-images", "--data-dir", str(data), "--lang", "cs", "--output", str(tmp_path / "o")]) == 2
    )
    assert "img.order names '../escape.jpg', which goes up with '..': image names must stay inside --output" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "escape.jpg").exists()
    assert (
        main(["commute-stand-in-images", "--data-dir", str(data), "--lang", "ru", "--output", str(tmp_path / "o")]) == 2
    )
    assert "has no img.order in en-ru/" in capsys.readouterr().err


def test_a_single_pair_folder_works_too(tmp_path):
    data = commute_folder(tmp_path / "commute", {"fr": ["x.jpg"]}) / "en-fr"
    assert main(["commute-stand-in-images", "--data-dir", str(data), "--output", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / "x.jpg").is_file()


def test_every_name_is_checked_before_any_image_is_written(tmp_path, capsys):
    """A Windows-style escape is refused as the CoMMuTE loader refuses it, and nothing is written."""
    data = commute_folder(tmp_path / "commute", {"fr": ["a.jpg", "b.jpg", "..\\up.jpg"]})
    out = tmp_path / "o"
    assert main(["commute-stand-in-images", "--data-dir", str(data), "--output", str(out)]) == 2
    assert "img.order names '..\\\\up.jpg', which goes up with '..'" in capsys.readouterr().err
    assert not out.exists()
