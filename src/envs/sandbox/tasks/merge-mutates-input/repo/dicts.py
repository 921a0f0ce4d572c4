def merge(a, b):
    """A new dict with the keys of a and b (b wins)."""
    a.update(b)
    return a
