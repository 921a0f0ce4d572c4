from calc.tokenizer import tokenize


def evaluate(text):
    tokens = tokenize(text)
    result = tokens[0]
    i = 1
    while i < len(tokens):
        op, rhs = tokens[i], tokens[i + 1]
        if op == "+":
            result = result + rhs
        elif op == "-":
            result = rhs - result
        i += 2
    return result
