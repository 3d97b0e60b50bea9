from annotate.llm.prompt import load_prompt


def test_version_is_stable_and_follows_the_template(tmp_path):
    assert load_prompt().version == load_prompt().version
    assert load_prompt().version.startswith("moral_v1@")
    (tmp_path / "p.txt").write_text("System.\n---- user ----\n{title}: {story}")
    first = load_prompt("p", tmp_path).version
    (tmp_path / "p.txt").write_text("System, changed.\n---- user ----\n{title}: {story}")
    assert load_prompt("p", tmp_path).version != first


def test_story_with_braces_survives():
    messages = load_prompt().messages("T {x}", "A {weird} story with {braces}.")
    assert messages[0]["role"] == "system" and "moral" in messages[0]["content"].lower()
    assert "A {weird} story with {braces}." in messages[1]["content"]
    assert "Title: T {x}" in messages[1]["content"]
