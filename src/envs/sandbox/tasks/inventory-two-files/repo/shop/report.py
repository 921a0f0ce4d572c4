def report_total(items):
    return round(sum(item.price for item in items), 2)
