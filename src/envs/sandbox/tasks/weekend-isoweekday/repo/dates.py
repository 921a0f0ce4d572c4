def is_weekend(day):
    return day.isoweekday() >= 5
