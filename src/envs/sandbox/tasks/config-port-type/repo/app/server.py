def is_valid_port(port):
    return isinstance(port, int) and 0 <= port <= 65535
