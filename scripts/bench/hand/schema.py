"""A JSON-schema-like validator, written by hand for Python 3.9: the schema's
"type" is read once and tested in an if/elif chain, each keyword is read
with `dict.get`; schemas without a type ($ref, enum, const, anyOf) come last.

Same results as scripts/bench/fixtures/schema.py. `run(n)` returns a checksum.
"""

from typing import Any, Dict, List

WORKLOAD = 300
MASK = 0xFFFFFFFF

Schema = Dict[str, Any]

# Error codes, appended to the error list with the depth they were found at.
WRONG_TYPE = 1
NOT_IN_ENUM = 2
NOT_CONST = 3
MISSING = 4
EXTRA = 5
TOO_LONG = 6
TOO_SHORT = 7
BAD_PREFIX = 8
OUT_OF_RANGE = 9
TOO_FEW = 10
TOO_MANY = 11
NO_OPTION = 12


def validate(
    schema: Schema, value: Any, defs: Dict[str, Schema], errors: List[int], depth: int
) -> None:
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            errors.append(WRONG_TYPE * 16 + depth)
            return
        props = schema.get("properties")
        if not isinstance(props, dict):
            return
        for key in schema.get("required", ()):
            if key not in value:
                errors.append(MISSING * 16 + depth)
        for key, sub in props.items():
            if key in value:
                validate(sub, value[key], defs, errors, depth + 1)
        extra = schema.get("additionalProperties")
        if extra is False:
            for key in value:
                if key not in props:
                    errors.append(EXTRA * 16 + depth)
        elif isinstance(extra, dict):
            for key in value:
                if key not in props:
                    validate(extra, value[key], defs, errors, depth + 1)
    elif kind == "array":
        if not isinstance(value, list):
            errors.append(WRONG_TYPE * 16 + depth)
            return
        low = schema.get("minItems")
        if low is not None and len(value) < low:
            errors.append(TOO_FEW * 16 + depth)
        else:
            high = schema.get("maxItems")
            if high is not None and len(value) > high:
                errors.append(TOO_MANY * 16 + depth)
        item_schema = schema["items"]
        for item in value:
            validate(item_schema, item, defs, errors, depth + 1)
    elif kind == "string":
        if not isinstance(value, str):
            errors.append(WRONG_TYPE * 16 + depth)
            return
        n = schema.get("maxLength")
        if n is not None:
            if len(value) > n:
                errors.append(TOO_LONG * 16 + depth)
            return
        n = schema.get("minLength")
        if n is not None:
            if len(value) < n:
                errors.append(TOO_SHORT * 16 + depth)
            return
        prefix = schema.get("prefix")
        if prefix is not None and not value.startswith(prefix):
            errors.append(BAD_PREFIX * 16 + depth)
    elif kind == "integer":
        if not isinstance(value, int) or isinstance(value, bool):
            errors.append(WRONG_TYPE * 16 + depth)
            return
        low = schema.get("minimum")
        if low is not None:
            high = schema.get("maximum")
            if high is not None:
                if not low <= value <= high:
                    errors.append(OUT_OF_RANGE * 16 + depth)
            elif value < low:
                errors.append(OUT_OF_RANGE * 16 + depth)
    elif kind == "number":
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            errors.append(WRONG_TYPE * 16 + depth)
    elif kind == "boolean":
        if not isinstance(value, bool):
            errors.append(WRONG_TYPE * 16 + depth)
    elif kind == "null":
        if value is not None:
            errors.append(WRONG_TYPE * 16 + depth)
    elif isinstance(kind, list):
        for each in kind:
            trial: List[int] = []
            validate({"type": each}, value, defs, trial, depth)
            if not trial:
                break
        else:
            errors.append(WRONG_TYPE * 16 + depth)
    elif "$ref" in schema:
        validate(defs[schema["$ref"]], value, defs, errors, depth)
    elif "enum" in schema:
        if value not in schema["enum"]:
            errors.append(NOT_IN_ENUM * 16 + depth)
    elif "const" in schema:
        if value != schema["const"]:
            errors.append(NOT_CONST * 16 + depth)
    elif "anyOf" in schema:
        for option in schema["anyOf"]:
            trial = []
            validate(option, value, defs, trial, depth)
            if not trial:
                break
        else:
            errors.append(NO_OPTION * 16 + depth)


DEFS: Dict[str, Schema] = {
    "id": {"type": "integer", "minimum": 1},
    "email": {"type": "string", "maxLength": 40},
    "tag": {"enum": ["new", "sale", "gift", "bulk", "fragile"]},
    "address": {
        "type": "object",
        "properties": {
            "street": {"type": "string", "minLength": 3},
            "city": {"type": "string", "maxLength": 20},
            "zip": {"type": "string", "prefix": "Z"},
            "country": {"enum": ["DE", "FR", "NL", "US"]},
        },
        "required": ["street", "city", "country"],
        "additionalProperties": False,
    },
    "item": {
        "type": "object",
        "properties": {
            "sku": {"type": "string", "prefix": "SKU-"},
            "quantity": {"type": "integer", "minimum": 1, "maximum": 99},
            "price": {"type": "number"},
            "tags": {"type": "array", "items": {"$ref": "tag"}, "maxItems": 3},
            "gift": {"type": "boolean"},
        },
        "required": ["sku", "quantity", "price"],
    },
}

ORDER: Schema = {
    "type": "object",
    "properties": {
        "id": {"$ref": "id"},
        "customer": {
            "type": "object",
            "properties": {
                "id": {"$ref": "id"},
                "name": {"type": "string", "maxLength": 30},
                "email": {"anyOf": [{"$ref": "email"}, {"type": "null"}]},
                "address": {"$ref": "address"},
            },
            "required": ["id", "name"],
        },
        "items": {"type": "array", "items": {"$ref": "item"}, "minItems": 1},
        "status": {"enum": ["open", "paid", "shipped", "cancelled"]},
        "note": {"type": ["string", "null"]},
        "version": {"const": 2},
        "meta": {
            "type": "object",
            "properties": {},
            "additionalProperties": {"type": ["string", "integer"]},
        },
        "extra": {},
    },
    "required": ["id", "customer", "items", "status"],
    "additionalProperties": False,
}

WORDS = ["red", "lamp", "oak", "river", "stone", "blue", "quiet", "amber"]


def make_documents(count: int) -> List[Any]:
    """Orders, most of them valid, some with one mistake (a deterministic
    linear congruential generator picks, not `random`)."""
    seed = 4242

    def draw(limit: int) -> int:
        nonlocal seed
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        return (seed >> 8) % limit

    def word() -> str:
        return WORDS[draw(len(WORDS))]

    documents: List[Any] = []
    for index in range(count):
        items = []
        for _ in range(1 + draw(4)):
            item: Dict[str, Any] = {
                "sku": "SKU-" + str(draw(10_000)),
                "quantity": 1 + draw(20),
                "price": draw(5_000) / 100,
            }
            if draw(2):
                item["tags"] = [["new", "sale", "gift", "bulk"][draw(4)]]
            if draw(3) == 0:
                item["gift"] = bool(draw(2))
            items.append(item)
        customer: Dict[str, Any] = {
            "id": 1 + draw(500),
            "name": word().title() + " " + word().title(),
            "email": word() + "@example.org" if draw(3) else None,
        }
        if draw(2):
            customer["address"] = {
                "street": str(1 + draw(99)) + " " + word() + " street",
                "city": word().title(),
                "zip": "Z" + str(draw(90_000)),
                "country": ["DE", "FR", "NL", "US"][draw(4)],
            }
        document: Dict[str, Any] = {
            "id": index + 1,
            "customer": customer,
            "items": items,
            "status": ["open", "paid", "shipped"][draw(3)],
            "version": 2,
        }
        if draw(2):
            document["note"] = word() if draw(4) else None
        if draw(2):
            document["meta"] = {"source": word(), "retries": draw(4)}
        mistake = draw(24)
        if mistake == 0:
            del document["customer"]["name"]
        elif mistake == 1:
            document["items"][0]["quantity"] = 100 + draw(50)
        elif mistake == 2:
            document["items"][-1]["tags"] = ["new", "used"]
        elif mistake == 3:
            document["status"] = "lost"
        elif mistake == 4:
            document["customer"]["email"] = word() * 12
        elif mistake == 5:
            document["items"] = []
        elif mistake == 6:
            document["meta"] = {"source": word(), "flags": [1, 2]}
        elif mistake == 7:
            document["coupon"] = "FREE"
        elif mistake == 8:
            document["customer"]["address"] = {"street": "x", "city": word()}
        elif mistake == 9:
            document["items"][0]["price"] = str(draw(100))
        elif mistake == 10:
            document["version"] = 1
        documents.append(document)
    documents.append([])
    documents.append({"id": True, "customer": {}, "items": "none", "status": 1})
    return documents


def run(n: int) -> int:
    documents = make_documents(40)
    checksum = 0
    for i in range(n):
        errors: List[int] = []
        validate(ORDER, documents[i % len(documents)], DEFS, errors, 0)
        checksum = (checksum * 31 + len(errors)) & MASK
        for error in errors:
            checksum = (checksum * 17 + error) & MASK
    return checksum
