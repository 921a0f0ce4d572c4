from collections import Counter


def word_counts(text):
    return dict(Counter(text.split()))
