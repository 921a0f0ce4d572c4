def remove_prefix(s, prefix):
    return s.lstrip(prefix)
