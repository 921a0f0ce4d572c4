from bsearch import search

def test_missing():
    assert search([1, 3, 5], 4) == -1

def test_middle():
    assert search([1, 3, 5], 3) == 1
