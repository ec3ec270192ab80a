"""Text-adventure command parser, written by hand for Python 3.9: dispatch on
the verb, then on the number of words, as a person writes it without `match`.

Same results as scripts/bench/fixtures/adventure.py. `run(n)` returns a checksum.
"""

WORKLOAD = 20_000

EXITS = {"north", "south", "east", "west", "up", "down"}
SHORT = {"n": "north", "s": "south", "e": "east", "w": "west", "u": "up", "d": "down"}
ITEMS = {"lamp", "key", "sword", "rope", "coin", "map", "bread"}

COMMANDS = [
    "go north",
    "n",
    "go up",
    "walk e",
    "go nowhere",
    "go north quickly",
    "west",
    "look",
    "l",
    "look at lamp",
    "look lamp",
    "examine door",
    "x rope",
    "take lamp",
    "get key",
    "pick up sword",
    "take bread and rope and coin",
    "get map and key",
    "take dragon",
    "take all",
    "pick up all",
    "drop coin",
    "drop lamp",
    "drop all",
    "inventory",
    "i",
    "inv",
    "say hello there friend",
    "shout help",
    "say",
    "attack troll with sword",
    "attack troll with spoon",
    "hit troll",
    "attack",
    "open door",
    "open chest with key",
    "open chest with crowbar",
    "use rope",
    "use key on door",
    "give coin to troll",
    "give bread to the hungry troll",
    "",
    "   ",
    "dance wildly",
    "climb",
    "wait",
    "z",
    "save slot1",
    "load slot1",
    "restore",
    "help",
    "?",
    "quit",
    "Q",
]


class Game:
    def __init__(self) -> None:
        self.room = 0
        self.inventory: list = []
        self.moves = 0
        self.saved = 0

    def move(self, direction: str) -> int:
        self.moves += 1
        self.room = (self.room * 7 + len(direction) + self.moves) % 101
        return self.room

    def take(self, item: str) -> int:
        if item in ITEMS and item not in self.inventory:
            self.inventory.append(item)
            return 10 + len(self.inventory)
        return -10

    def drop(self, item: str) -> int:
        if item in self.inventory:
            self.inventory.remove(item)
            return 20 + len(self.inventory)
        return -20


GO = {"go", "walk", "run"}
TAKE = {"take", "get"}
SINGLE_EXITS = {"north", "south", "east", "west", "up", "down"}


def take_all(game: Game) -> int:
    return sum(game.take(item) for item in sorted(ITEMS))


def handle(game: Game, command: str) -> int:
    words = command.split()
    count = len(words)
    if count == 0:
        return 0
    verb = words[0]
    if verb in GO:
        if count == 2:
            direction = words[1]
            if direction in EXITS:
                return game.move(direction)
            if direction in SHORT:
                return game.move(SHORT[direction])
        return -1
    if count == 1:
        if verb in SHORT:
            return game.move(SHORT[verb])
        if verb in SINGLE_EXITS:
            return game.move(verb)
        if verb == "look" or verb == "l":
            return 100 + game.room
        if verb in ("inventory", "inv", "i"):
            return 400 + len(game.inventory)
        if verb in ("quit", "exit", "q", "Q"):
            return 1200
        if verb in ("help", "?", "h"):
            return 1300
        if verb == "wait" or verb == "z":
            game.moves += 1
            return 1400
        if verb in TAKE or verb == "pick":
            return -2
        return -len(verb)
    rest = count - 1
    if verb == "look":
        if count == 3 and words[1] == "at":
            thing = words[2]
            return 200 + len(thing) + (thing in game.inventory)
        if count == 2:
            thing = words[1]
            return 200 + len(thing) + (thing in game.inventory)
    elif verb == "examine" or verb == "x":
        if count == 2:
            thing = words[1]
            return 200 + len(thing) + (thing in game.inventory)
    elif verb in TAKE:
        if count == 2:
            item = words[1]
            if item == "all":
                return take_all(game)
            if item in ITEMS:
                return game.take(item)
        elif words[2] == "and":
            total = game.take(words[1])
            for word in words[3:]:
                if word != "and":
                    total += game.take(word)
            return total
        return -2
    elif verb == "pick":
        if count == 3 and words[1] == "up":
            item = words[2]
            if item == "all":
                return take_all(game)
            if item in ITEMS:
                return game.take(item)
        return -2
    elif verb == "drop":
        if count == 2:
            item = words[1]
            if item == "all":
                dropped = len(game.inventory)
                game.inventory.clear()
                return 300 + dropped
            return game.drop(item)
    elif verb == "say" or verb == "shout":
        return len(verb) + sum(len(word) for word in words[1:])
    elif verb == "attack" or verb == "hit":
        if count == 4 and words[2] == "with" and words[3] in game.inventory:
            return 500 + len(words[1])
        return 600 + len(words[1])
    elif verb == "open":
        if count == 2:
            return 700 + len(words[1])
        if count == 4 and words[2] == "with" and words[3] in game.inventory:
            return 800 + len(words[1])
    elif verb == "give":
        if count >= 4 and words[2] == "to" and words[1] in game.inventory:
            game.drop(words[1])
            return 900 + count - 3
    elif verb == "use":
        return 1000 + len(words[1]) + count - 2
    elif verb == "save" or verb == "load":
        if count == 2:
            game.saved += 1
            return 1100 + len(verb) + len(words[1]) + game.saved
    return -len(verb) - rest


def run(n: int) -> int:
    game = Game()
    checksum = 0
    commands = COMMANDS
    count = len(commands)
    for i in range(n):
        checksum = (checksum * 31 + handle(game, commands[i % count])) & 0xFFFFFFFF
        if i % 500 == 499:
            game = Game()
    return checksum
