"""Command-line refusals that name the real problem: finite-size keywords in the expression
language, an input path that is a directory, an ``--out`` that names a single file
(freeprob.cli.expr, freeprob._files.check_input, freeprob.experiments.store_paths.check_out_name)."""
import pytest

from freeprob.cli import main
from freeprob.cli.expr import parse_law
from freeprob.errors import FreeprobValueError


@pytest.mark.parametrize("text, culprit", [
    ("output_law(heads=2, n=32, d_k=8, d_v=8, d_o=32, beta=1, finite_n=True)", "n="),
    ("output_law(heads=2, gamma_k=1, gamma_v=1, gamma_o=1, beta=1, finite_n=1)", "finite_n="),
    ("attention_law(heads=1, gamma_k=1, gamma_v=1, gamma_o=1, finite_width=True)", "finite_width="),
    ("Semicircle(finite_n=10)", "finite_n="),
])
def test_finite_size_keywords_point_at_the_python_api_and_verify(text, culprit):
    with pytest.raises(FreeprobValueError, match=culprit + " is not available in expressions") as info:
        parse_law(text)
    assert "law.finite_n(n)" in str(info.value) and "verify --finite-n" in str(info.value)


def test_an_input_that_is_a_directory_is_named_so(tmp_path, capsys):
    assert main(["fit", str(tmp_path)]) == 2
    assert "(it is a directory); give a file" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "missing.txt")]) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "d.sqlite").mkdir()
    assert main(["sweep", "show", str(tmp_path / "d.sqlite")]) == 2
    assert "it is a directory" in capsys.readouterr().err


@pytest.mark.parametrize("argv, match", [
    (["verify", "--quick", "--out", "{}/foo.txt"], "looks like the name of a single .txt file"),
    (["readout", "sharing", "--quick", "--out", "{}/r.json"], "single .json file"),
    (["readout", "sharing", "--quick", "--out", "{}/r.sqlite"], "looks like a database file"),
    (["explore", "inputs", "--quick", "--out", "{}/e.csv"], "single .csv file"),
])
def test_an_out_that_names_a_single_file_is_refused_and_nothing_is_made(tmp_path, capsys, argv, match):
    argv = [a.format(tmp_path) for a in argv]
    assert main(argv) == 2
    assert match in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("configs", ["gpt2-small,,bert-base", "gpt2-small,"])
def test_an_empty_configuration_name_is_refused(tmp_path, capsys, configs):
    with pytest.raises(SystemExit) as info:
        main(["verify", "--quick", "--configs", configs, "--out", str(tmp_path / "v")])
    assert info.value.code == 2
    assert "none empty" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["", " "])
def test_fit_of_an_empty_file_name_says_so(capsys, name):
    assert main(["fit", name]) == 2
    assert "the file name is empty" in capsys.readouterr().err


def test_a_ctrl_c_while_the_command_line_is_imported_is_one_line(monkeypatch, capsys):
    import builtins
    import sys
    from freeprob._entry import main as entry
    real = builtins.__import__

    def interrupted(name, *args, **kwargs):
        if name == "freeprob.cli.main":
            raise KeyboardInterrupt
        return real(name, *args, **kwargs)
    monkeypatch.delitem(sys.modules, "freeprob.cli.main", raising=False)
    monkeypatch.setattr(builtins, "__import__", interrupted)
    assert entry(["--help"]) == 130
    assert capsys.readouterr().err == "freeprob: interrupted\n"
