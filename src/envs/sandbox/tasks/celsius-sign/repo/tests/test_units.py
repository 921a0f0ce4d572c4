from units import to_kelvin

def test_kelvin():
    assert to_kelvin(0) == 273.15
