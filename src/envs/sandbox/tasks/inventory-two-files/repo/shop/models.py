class Item:
    def __init__(self, name, price, qty, discount=0.0):
        self.name = name
        self.price = price
        self.qty = qty
        self.discount = discount

    def total(self):
        return self.price * self.qty
