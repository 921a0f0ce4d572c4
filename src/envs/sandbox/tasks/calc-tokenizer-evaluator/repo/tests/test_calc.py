from calc.evaluator import evaluate

def test_add():
    assert evaluate("1 + 2") == 3
