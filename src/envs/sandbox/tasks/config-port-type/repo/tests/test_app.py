from app.config import load_config

def test_default():
    assert load_config({}) == {"host": "localhost", "port": 8080}
