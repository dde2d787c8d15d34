"""MEGA: the authors' LRA commands, one literal row per task.

Ma et al. 2023 (MEGA), facebookresearch/mega `examples/mega/README.lra.md`
and the architectures they name (`fairseq/models/lra/model.py`,
`mega_lra_<task>`: listop, imdb, aan, cifar10, pf32, pf128): encoder
layers, embed dim -> `hidden_dim`, hidden dim -> `intermediate_dim`, FFN dim
= hidden dim (base_architecture default), z_dim -> `key_dim`, n_dim ->
`ema_dim`, attention activation, `--encoder-normalize-before` -> `prenorm`,
dropout, attention-dropout 0; Adam betas (0.9, 0.98), clip 1.0, linear
decay to 0 after the warmup (cosine here). Effective batch = batch-size x
update-freq (x 8 GPUs for Path-X); epochs = max-update x batch / training
rows: ListOps 90000 x 64 / 96000 = 60; IMDB 25 x 2, 25000 x 50 / 25000 =
50; AAN 8 x 8, 91960 x 64 / 147086 = 40; CIFAR-10 (chunk 1024) 180000 x 50
/ 45000 = 200; Pathfinder (chunk 1024) 250000 x 128 / 160000 = 200. A
chunk size equal to the whole sequence is full attention (None).

Path-X (mega_lra_pf128, chunk 128 x 128): batch 2 x update-freq 8 x 8 GPUs
= 128; 125000 x 128 / 160000 = 100 epochs. The README leaves the warmup as
${WARMUP} (with --warmup-power 2): 25000 here is derived, 20% of the
updates as in the Pathfinder command (50000 / 250000).

PathX-256: no MEGA run exists. The Path-X architecture, attending in
chunks of 16384 (Path-X's whole sequence), max pooling as NTFS C.1.2.
"""

PAPER = {
    ("listops", "mega"): dict(
        sequence_length=2000, hidden_dim=80, num_layers=6,
        intermediate_dim=160, ffn_intermediate_dim=160, key_dim=64, ema_dim=16,
        attention_activation="softmax", chunk_size=None, dropout=0.1,
        attention_dropout=0.0, prenorm=False, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.01, epochs=60,
        warmup_steps=3000, schedule="cosine", gradient_clipnorm=1.0,
        source=(
            "MEGA LRA run (Ma et al. 2023, README.lra.md, "
            "mega_lra_listop)"
        ),
    ),
    ("text", "mega"): dict(
        hidden_dim=128, num_layers=4, intermediate_dim=256,
        ffn_intermediate_dim=256, key_dim=64, ema_dim=16,
        attention_activation="softmax", chunk_size=None, dropout=0.1,
        attention_dropout=0.0, prenorm=False, pooling="mean",
        learning_rate=0.004, batch_size=50, weight_decay=0.01, epochs=50,
        warmup_steps=10000, schedule="cosine", gradient_clipnorm=1.0,
        source="MEGA LRA run (Ma et al. 2023, README.lra.md, mega_lra_imdb)",
    ),
    ("retrieval", "mega"): dict(
        hidden_dim=128, num_layers=6, intermediate_dim=256,
        ffn_intermediate_dim=256, key_dim=64, ema_dim=16,
        attention_activation="softmax", chunk_size=None, dropout=0.1,
        attention_dropout=0.0, prenorm=False, pooling="mean",
        learning_rate=0.003, batch_size=64, weight_decay=0.04, epochs=40,
        warmup_steps=10000, schedule="cosine", gradient_clipnorm=1.0,
        source="MEGA LRA run (Ma et al. 2023, README.lra.md, mega_lra_aan)",
    ),
    ("image", "mega"): dict(
        hidden_dim=160, num_layers=8, intermediate_dim=320,
        ffn_intermediate_dim=320, key_dim=96, ema_dim=16,
        attention_activation="laplace", chunk_size=None, dropout=0.0,
        attention_dropout=0.0, prenorm=True, pooling="mean",
        learning_rate=0.01, batch_size=50, weight_decay=0.02, epochs=200,
        warmup_steps=9000, schedule="cosine", gradient_clipnorm=1.0,
        source=(
            "MEGA LRA run (Ma et al. 2023, README.lra.md, "
            "mega_lra_cifar10)"
        ),
    ),
    ("pathfinder", "mega"): dict(
        hidden_dim=128, num_layers=6, intermediate_dim=256,
        ffn_intermediate_dim=256, key_dim=64, ema_dim=16,
        attention_activation="laplace", chunk_size=None, dropout=0.0,
        attention_dropout=0.0, prenorm=True, pooling="mean",
        learning_rate=0.01, batch_size=128, weight_decay=0.01, epochs=200,
        warmup_steps=50000, schedule="cosine", gradient_clipnorm=1.0,
        source="MEGA LRA run (Ma et al. 2023, README.lra.md, mega_lra_pf32)",
    ),
    ("pathx", "mega"): dict(
        hidden_dim=64, num_layers=4, intermediate_dim=128,
        ffn_intermediate_dim=128, key_dim=32, ema_dim=16,
        attention_activation="laplace", chunk_size=None, dropout=0.0,
        attention_dropout=0.0, prenorm=True, pooling="mean",
        learning_rate=0.01, batch_size=128, weight_decay=0.01, epochs=100,
        warmup_steps=25000, schedule="cosine", gradient_clipnorm=1.0,
        source=(
            "MEGA LRA run (Ma et al. 2023, README.lra.md, "
            "mega_lra_pf128); warmup derived"
        ),
    ),
    ("pathx256", "mega"): dict(
        hidden_dim=64, num_layers=4, intermediate_dim=128,
        ffn_intermediate_dim=128, key_dim=32, ema_dim=16,
        attention_activation="laplace", chunk_size=16384, dropout=0.0,
        attention_dropout=0.0, prenorm=True, pooling="max", learning_rate=0.01,
        batch_size=128, weight_decay=0.01, epochs=100, warmup_steps=25000,
        schedule="cosine", gradient_clipnorm=1.0,
        source=(
            "derived: the MEGA Path-X run (mega_lra_pf128) at 256x256, "
            "chunks of 16384, max pooling as Never Train from Scratch "
            "C.1.2"
        ),
    ),
}
