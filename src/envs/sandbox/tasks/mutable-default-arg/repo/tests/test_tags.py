from tags import add_tag

def test_given_list():
    assert add_tag("b", ["a"]) == ["a", "b"]
