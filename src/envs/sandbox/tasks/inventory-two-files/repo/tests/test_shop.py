from shop.models import Item

def test_plain_total():
    assert Item("pen", 2.0, 3).total() == 6.0
