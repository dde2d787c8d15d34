"""The ListOps vocabulary: tokens, their ids and the sizes of the task.

Shared by the generator, the evaluator, the tokenizer and the TSV files;
`lra_keras.tasks` and the techniques (`lra_keras.techniques`) use the
ids too.
"""

# The vocabulary is fixed (not built from the training data, as the LRA
# pipeline does) so that token ids mean the same thing for every split, every
# generated variant and every saved model.
VOCABULARY = (
    ["<pad>"]
    + [str(digit) for digit in range(10)]
    + ["[MIN", "[MAX", "[MED", "[SM", "]", "<mask>"]
)
PAD_ID = 0
MASK_ID = 16
VOCABULARY_SIZE = 17
MAX_LENGTH = 2000
NUM_CLASSES = 10

OPERATORS = ("[MIN", "[MAX", "[MED", "[SM")
END = "]"

# Tokens a source may contain. `<pad>` and `<mask>` are ids, never text.
_TOKEN_TO_ID = {token: i for i, token in enumerate(VOCABULARY)}
del _TOKEN_TO_ID["<pad>"], _TOKEN_TO_ID["<mask>"]
_PARENS = frozenset(("(", ")"))
_DIGITS = frozenset("0123456789")
_END_ID = _TOKEN_TO_ID[END]


def _preview(text, limit=80):
    # A source as error messages show it: at most `limit` characters.
    return repr(text if len(text) <= limit else text[:limit] + "...")
