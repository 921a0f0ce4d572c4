def tokenize(text):
    tokens = []
    for ch in text.replace(" ", ""):
        if ch.isdigit():
            tokens.append(int(ch))
        else:
            tokens.append(ch)
    return tokens
