def safe_divide(a, b):
    """a / b, or None when b is zero."""
    return a / b
