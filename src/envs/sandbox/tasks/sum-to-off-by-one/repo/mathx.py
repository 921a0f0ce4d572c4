def sum_to(n):
    """Return 1 + 2 + ... + n (0 for n <= 0)."""
    return sum(range(n))
