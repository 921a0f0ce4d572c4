from fizz import fizzbuzz

def test_plain():
    assert fizzbuzz(7) == "7"
    assert fizzbuzz(9) == "Fizz"
    assert fizzbuzz(10) == "Buzz"
