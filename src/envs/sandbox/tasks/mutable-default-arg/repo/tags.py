def add_tag(tag, tags=[]):
    tags.append(tag)
    return tags
