"""The model zoo: small configurations of real models (torchvision, transformers, timm, torch.nn) with
a fixed batch, a loss and an optimizer, as ``make check`` trains them (test/model-zoo/model_zoo.py).

``ZOO[name]()`` returns a :class:`ZooCase`; a model whose package is not installed raises
``ModuleNotFoundError`` (the zoo reports it as skipped and names the package).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .models import MLP


@dataclass
class ZooCase:
    model: torch.nn.Module
    loss_fn: object
    inputs: tuple
    optimizer: str
    options: dict = field(default_factory=dict)
    package: str = "torch"

    def export(self, out_dir, dialect="tosa"):
        """The whole training step, exported by :func:`amp_mlir.torch.export_train_step` into
        ``out_dir`` (step, manifest, initial arrays) through torch-mlir's ``dialect`` import ("tosa" or
        "linalg"); returns its :class:`ExportedStep`."""
        from ._export import export_train_step

        return export_train_step(self.model, self.loss_fn, self.inputs, optimizer=self.optimizer,
                                 out_dir=out_dir, dialect=dialect, **self.options)


def _lm_loss(logits, labels):
    """Next-token cross entropy over every position (a causal language model's training loss)."""
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


class _Logits(torch.nn.Module):
    """A Hugging Face model whose forward returns an output object, reduced to its logits; its one input
    goes in as the keyword ``argument`` (token ids, or ``pixel_values`` for an image model)."""

    def __init__(self, model, argument="input_ids"):
        super().__init__()
        self.model = model
        self.argument = argument

    def forward(self, x):
        return self.model(**{self.argument: x}).logits


class LSTMClassifier(torch.nn.Module):
    """One-layer LSTM over a sequence, a linear classifier on its last hidden state."""

    def __init__(self, features=8, hidden=16, classes=4):
        super().__init__()
        self.lstm = torch.nn.LSTM(features, hidden, batch_first=True)
        self.head = torch.nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _image_classifier(make, optimizer, options, package, batch=4, size=64):
    """A 10-class classifier ``make()`` builds (weights drawn from seed 0) on a random batch of
    ``batch`` RGB images of ``size`` x ``size`` and labels (seed 1), with cross entropy."""
    torch.manual_seed(0)
    m = make()
    g = _gen(1)
    return ZooCase(m, torch.nn.functional.cross_entropy,
                   (torch.randn(batch, 3, size, size, generator=g), torch.randint(0, 10, (batch,), generator=g)),
                   optimizer, options, package)


def _causal_lm(make):
    """A Hugging Face causal language model ``make()`` builds (seed 0, vocabulary 128) on 2 random
    sequences of 16 tokens (seed 1), next-token cross entropy, AdamW."""
    torch.manual_seed(0)
    m = _Logits(make())
    g = _gen(1)
    ids = torch.randint(0, 128, (2, 16), generator=g)
    return ZooCase(m, _lm_loss, (ids, torch.roll(ids, -1, 1)), "adamw", {"lr": 1e-3, "weight_decay": 0.01},
                   "transformers")


def _sequence_classifier(make, num_labels):
    """A Hugging Face sequence classifier ``make()`` builds (seed 0, vocabulary 128) on 2 random
    sequences of 16 tokens and labels (seed 1), cross entropy, AdamW."""
    torch.manual_seed(0)
    m = _Logits(make())
    g = _gen(1)
    return ZooCase(m, torch.nn.functional.cross_entropy,
                   (torch.randint(0, 128, (2, 16), generator=g), torch.randint(0, num_labels, (2,), generator=g)),
                   "adamw", {"lr": 1e-3, "weight_decay": 0.01}, "transformers")


def resnet18():
    import torchvision
    # 64x64 and a batch of 4: the last stage's batch norm then sees 4 x 2 x 2 values per channel (at
    # 32x32 with a batch of 2 it normalises 2 values, and fp32 runs of PyTorch itself part from float64
    # by 1e-3 in the first forward pass and diverge within 3 steps).
    return _image_classifier(lambda: torchvision.models.resnet18(num_classes=10),
                             "sgd", {"lr": 0.001, "momentum": 0.9, "weight_decay": 1e-4}, "torchvision")


def mobilenet_v3_small():
    import torchvision
    return _image_classifier(lambda: torchvision.models.mobilenet_v3_small(num_classes=10, dropout=0.0),
                             "sgd", {"lr": 0.002, "momentum": 0.9}, "torchvision")


def gpt2():
    import transformers
    cfg = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=128, n_positions=32,
                                  resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                  bos_token_id=0, eos_token_id=0, attn_implementation="eager")
    return _causal_lm(lambda: transformers.GPT2LMHeadModel(cfg))


def bert():
    import transformers
    cfg = transformers.BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=2, intermediate_size=128,
                                  vocab_size=128, max_position_embeddings=32, num_labels=4,
                                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                  attn_implementation="eager")
    return _sequence_classifier(lambda: transformers.BertForSequenceClassification(cfg), 4)


def vit_tiny():
    import timm
    return _image_classifier(lambda: timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32,
                                                       patch_size=8, depth=2, num_classes=10),
                             "adamw", {"lr": 1e-3, "weight_decay": 0.05}, "timm", batch=2, size=32)


def lstm():
    torch.manual_seed(0)
    g = _gen(1)
    return ZooCase(LSTMClassifier(), torch.nn.functional.cross_entropy,
                   (torch.randn(4, 12, 8, generator=g), torch.randint(0, 4, (4,), generator=g)),
                   "adam", {"lr": 1e-2})


def mnist_mlp():
    torch.manual_seed(0)
    g = _gen(1)
    return ZooCase(MLP(784, 128, 10), torch.nn.functional.cross_entropy,
                   (torch.randn(16, 784, generator=g), torch.randint(0, 10, (16,), generator=g)),
                   "adam", {"lr": 1e-3})


def regression():
    torch.manual_seed(0)
    g = _gen(1)
    x = torch.randn(32, 10, generator=g)
    return ZooCase(MLP(10, 20, 1), torch.nn.functional.mse_loss, (x, x.sum(1, keepdim=True) * 0.3), "sgd",
                   {"lr": 0.05})


# Models tried as a new user would (issue 27's check: other architectures of the same families), not run
# by make check (minutes each): ``python test/model-zoo/model_zoo.py --models shufflenet_v2_x0_5,...``.
# docs/ModelZoo.md says how each fared.


def shufflenet_v2_x0_5():
    import torchvision
    return _image_classifier(lambda: torchvision.models.shufflenet_v2_x0_5(num_classes=10),
                             "sgd", {"lr": 0.002, "momentum": 0.9}, "torchvision")


def efficientnet_b0():
    import torchvision
    return _image_classifier(lambda: torchvision.models.efficientnet_b0(num_classes=10, dropout=0.0,
                                                                        stochastic_depth_prob=0.0),
                             "sgd", {"lr": 0.002, "momentum": 0.9}, "torchvision")


def distilbert():
    import transformers
    cfg = transformers.DistilBertConfig(n_layers=2, dim=64, n_heads=2, hidden_dim=128, vocab_size=128,
                                        max_position_embeddings=32, num_labels=3, dropout=0.0,
                                        attention_dropout=0.0, seq_classif_dropout=0.0,
                                        attn_implementation="eager")
    return _sequence_classifier(lambda: transformers.DistilBertForSequenceClassification(cfg), 3)


def convnext_atto():
    import timm
    return _image_classifier(lambda: timm.create_model("convnext_atto", num_classes=10, pretrained=False),
                             "adamw", {"lr": 1e-3, "weight_decay": 0.05}, "timm", batch=2)


def squeezenet1_1():
    import torchvision
    return _image_classifier(lambda: torchvision.models.squeezenet1_1(num_classes=10, dropout=0.0),
                             "sgd", {"lr": 0.002, "momentum": 0.9}, "torchvision")


def mobilenet_v2():
    import torchvision
    return _image_classifier(lambda: torchvision.models.mobilenet_v2(num_classes=10, dropout=0.0, width_mult=0.35),
                             "sgd", {"lr": 0.002, "momentum": 0.9}, "torchvision")


def opt():
    import transformers
    cfg = transformers.OPTConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=2, ffn_dim=128,
                                 vocab_size=128, max_position_embeddings=32, word_embed_proj_dim=64,
                                 dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, layerdrop=0.0,
                                 attn_implementation="eager")
    return _causal_lm(lambda: transformers.OPTForCausalLM(cfg))


class GRUClassifier(torch.nn.Module):
    """Two-layer GRU over a sequence, a linear classifier on its last output."""

    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(12, 24, num_layers=2, batch_first=True)
        self.fc = torch.nn.Linear(24, 5)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.fc(out[:, -1])


def gru2():
    torch.manual_seed(0)
    g = _gen(1)
    return ZooCase(GRUClassifier(), torch.nn.functional.cross_entropy,
                   (torch.randn(3, 7, 12, generator=g), torch.randint(0, 5, (3,), generator=g)), "adam", {"lr": 1e-2})


# A second batch (2026-11-27): more torchvision CNNs (dense blocks, grouped convolutions, inception
# branches), timm token mixers (MLP-Mixer, PoolFormer's pooling, DeiT), transformers decoders and
# encoder-decoders (LLaMA with grouped-query attention, T5, RoBERTa, GPT-Neo local attention, BLOOM's
# ALiBi and custom GELU autograd.Function), nn.TransformerEncoder and a Conv1d + bidirectional GRU.


def densenet121():
    import torchvision
    return _image_classifier(lambda: torchvision.models.densenet121(num_classes=10),
                             "sgd", {"lr": 0.002, "momentum": 0.9}, "torchvision")


def regnet_y_400mf():
    import torchvision
    return _image_classifier(lambda: torchvision.models.regnet_y_400mf(num_classes=10),
                             "sgd", {"lr": 0.002, "momentum": 0.9}, "torchvision")


def mnasnet0_5():
    import torchvision
    return _image_classifier(lambda: torchvision.models.mnasnet0_5(num_classes=10, dropout=0.0),
                             "sgd", {"lr": 0.002, "momentum": 0.9}, "torchvision")


def googlenet():
    import torchvision
    return _image_classifier(lambda: torchvision.models.googlenet(num_classes=10, aux_logits=False,
                                                                  init_weights=True, dropout=0.0),
                             "sgd", {"lr": 0.002, "momentum": 0.9}, "torchvision", batch=2)


def mixer_tiny():
    from timm.models.mlp_mixer import MlpMixer
    return _image_classifier(lambda: MlpMixer(num_classes=10, img_size=32, patch_size=8, num_blocks=2, embed_dim=64),
                             "adamw", {"lr": 1e-3, "weight_decay": 0.05}, "timm", batch=2, size=32)


def poolformer_tiny():
    from timm.models.metaformer import GroupNorm1, MetaFormer, Pooling
    return _image_classifier(lambda: MetaFormer(num_classes=10, depths=(1, 1, 1, 1), dims=(16, 32, 48, 64),
                                                downsample_norm=None, token_mixers=Pooling, mlp_act=torch.nn.GELU,
                                                mlp_bias=True, norm_layers=GroupNorm1, layer_scale_init_values=1e-5,
                                                res_scale_init_values=None, use_mlp_head=False),
                             "adamw", {"lr": 1e-3, "weight_decay": 0.05}, "timm", batch=2, size=32)


def deit_tiny():
    import timm
    return _image_classifier(lambda: timm.create_model("deit_tiny_patch16_224", num_classes=10, img_size=32,
                                                       patch_size=8, depth=2),
                             "adamw", {"lr": 1e-3, "weight_decay": 0.05}, "timm", batch=2, size=32)


# The LLaMA-shaped decoders' common size: 2 layers, width 64, 4 query heads sharing 2 key-value heads.
_LLAMA_SIZE = dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                   intermediate_size=128, vocab_size=128, max_position_embeddings=32, attn_implementation="eager")


def llama():
    import transformers
    return _causal_lm(lambda: transformers.LlamaForCausalLM(transformers.LlamaConfig(**_LLAMA_SIZE)))


class _T5Logits(torch.nn.Module):
    """T5 as a sequence-to-sequence model on the same tokens in and out, reduced to its logits."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids, decoder_input_ids=ids).logits


def t5():
    import transformers
    cfg = transformers.T5Config(num_layers=2, num_decoder_layers=2, d_model=64, d_kv=16, num_heads=4, d_ff=128,
                                vocab_size=128, dropout_rate=0.0, decoder_start_token_id=0, pad_token_id=0)
    torch.manual_seed(0)
    m = _T5Logits(transformers.T5ForConditionalGeneration(cfg))
    ids = torch.randint(0, 128, (2, 16), generator=_gen(1))
    return ZooCase(m, _lm_loss, (ids, torch.roll(ids, -1, 1)), "adamw", {"lr": 1e-3, "weight_decay": 0.01},
                   "transformers")


def roberta():
    import transformers
    cfg = transformers.RobertaConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=2, intermediate_size=128,
                                     vocab_size=128, max_position_embeddings=40, num_labels=3, hidden_dropout_prob=0.0,
                                     attention_probs_dropout_prob=0.0, attn_implementation="eager")
    return _sequence_classifier(lambda: transformers.RobertaForSequenceClassification(cfg), 3)


def gpt_neo():
    import transformers
    cfg = transformers.GPTNeoConfig(num_layers=2, hidden_size=64, num_heads=2, attention_types=[[["global", "local"], 1]],
                                    window_size=8, vocab_size=128, max_position_embeddings=32, embed_dropout=0.0,
                                    attention_dropout=0.0, resid_dropout=0.0, attn_implementation="eager")
    return _causal_lm(lambda: transformers.GPTNeoForCausalLM(cfg))


def bloom():
    import transformers
    cfg = transformers.BloomConfig(n_layer=2, hidden_size=64, n_head=4, vocab_size=128, hidden_dropout=0.0,
                                   attention_dropout=0.0, attn_implementation="eager")
    return _causal_lm(lambda: transformers.BloomForCausalLM(cfg))


class TransformerEncoderClassifier(torch.nn.Module):
    """Token embedding, a 2-layer pre-norm nn.TransformerEncoder (GELU), mean over tokens, a linear head."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(50, 32)
        layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True, norm_first=True,
                                                 activation="gelu")
        self.enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.fc = torch.nn.Linear(32, 6)

    def forward(self, x):
        return self.fc(self.enc(self.emb(x)).mean(1))


def nn_transformer():
    torch.manual_seed(0)
    g = _gen(1)
    return ZooCase(TransformerEncoderClassifier(), torch.nn.functional.cross_entropy,
                   (torch.randint(0, 50, (3, 10), generator=g), torch.randint(0, 6, (3,), generator=g)), "adamw",
                   {"lr": 1e-3, "weight_decay": 0.01})


class Conv1dBiGRU(torch.nn.Module):
    """Conv1d + batch norm + SiLU, a dilated grouped Conv1d, max pooling, a bidirectional GRU, a linear head."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv1d(4, 16, 5, padding=2)
        self.bn = torch.nn.BatchNorm1d(16)
        self.c2 = torch.nn.Conv1d(16, 16, 3, dilation=2, groups=4)
        self.gru = torch.nn.GRU(16, 20, bidirectional=True, batch_first=True)
        self.fc = torch.nn.Linear(40, 3)

    def forward(self, x):
        h = torch.nn.functional.silu(self.bn(self.c1(x)))
        h = torch.nn.functional.max_pool1d(self.c2(h), 2)
        out, _ = self.gru(h.transpose(1, 2))
        return self.fc(out[:, -1])


def conv1d_bigru():
    torch.manual_seed(0)
    g = _gen(1)
    return ZooCase(Conv1dBiGRU(), torch.nn.functional.cross_entropy,
                   (torch.randn(3, 4, 24, generator=g), torch.randint(0, 3, (3,), generator=g)), "sgd",
                   {"lr": 0.01, "momentum": 0.9})



# A third batch (2026-11-27): timm's hybrid vision models (LeViT: convolution stem, attention with a
# learned relative-position bias and batch norm on tokens; MobileViT: inverted residuals and
# transformer blocks on unfolded patches; Swin: shifted windows, its bias table gathered by index) and
# more transformers decoders and encoders (Mistral's sliding window, Qwen2, ALBERT's shared layers).


def levit_128s():
    import timm
    # A batch of 4: LeViT normalises its tokens with batch norm, and with 2 images PyTorch's own fp32
    # run parts from float64 by 2% at step 3 (by 2.5e-5 with 4).
    return _image_classifier(lambda: timm.create_model("levit_128s", num_classes=10, img_size=64),
                             "adamw", {"lr": 1e-3, "weight_decay": 0.05}, "timm", batch=4)


def mobilevit_xxs():
    import timm
    return _image_classifier(lambda: timm.create_model("mobilevit_xxs", num_classes=10),
                             "adamw", {"lr": 1e-3, "weight_decay": 0.05}, "timm", batch=2)


def swin_tiny():
    from timm.models.swin_transformer import SwinTransformer
    return _image_classifier(lambda: SwinTransformer(img_size=56, patch_size=4, window_size=7, embed_dim=32,
                                                     depths=(2, 2), num_heads=(1, 2), num_classes=10,
                                                     drop_path_rate=0.0),
                             "adamw", {"lr": 1e-3, "weight_decay": 0.05}, "timm", batch=2, size=56)


def mistral():
    import transformers
    cfg = transformers.MistralConfig(**_LLAMA_SIZE, sliding_window=8)
    return _causal_lm(lambda: transformers.MistralForCausalLM(cfg))


def qwen2():
    import transformers
    return _causal_lm(lambda: transformers.Qwen2ForCausalLM(transformers.Qwen2Config(**_LLAMA_SIZE)))


def albert():
    import transformers
    cfg = transformers.AlbertConfig(num_hidden_layers=2, embedding_size=32, hidden_size=64, num_attention_heads=2,
                                    intermediate_size=128, vocab_size=128, max_position_embeddings=32, num_labels=4,
                                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                    classifier_dropout_prob=0.0, attn_implementation="eager")
    return _sequence_classifier(lambda: transformers.AlbertForSequenceClassification(cfg), 4)


# A fourth group (2026-11-27): ConvBERT (span convolutions through nn.Unfold, whose backward is col2im) and
# BEiT (an image transformer with relative-position bias tables).
def convbert():
    import transformers
    cfg = transformers.ConvBertConfig(num_hidden_layers=2, hidden_size=64, embedding_size=64, num_attention_heads=2,
                                      intermediate_size=128, vocab_size=128, max_position_embeddings=32, num_labels=3,
                                      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return _sequence_classifier(lambda: transformers.ConvBertForSequenceClassification(cfg), 3)


def beit():
    import transformers
    cfg = transformers.BeitConfig(image_size=32, patch_size=8, num_hidden_layers=2, hidden_size=64,
                                  num_attention_heads=2, intermediate_size=128, num_labels=10,
                                  use_relative_position_bias=True, layer_scale_init_value=0.1,
                                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, drop_path_rate=0.0)
    return _image_classifier(lambda: _Logits(transformers.BeitForImageClassification(cfg), "pixel_values"),
                             "adamw", {"lr": 1e-3, "weight_decay": 0.05}, "transformers", size=32)


ZOO = {
    "resnet18": resnet18,
    "mobilenet_v3_small": mobilenet_v3_small,
    "gpt2": gpt2,
    "bert": bert,
    "vit_tiny": vit_tiny,
    "lstm": lstm,
    "mnist_mlp": mnist_mlp,
    "regression": regression,
}

UNSEEN = {
    "shufflenet_v2_x0_5": shufflenet_v2_x0_5,
    "efficientnet_b0": efficientnet_b0,
    "distilbert": distilbert,
    "convnext_atto": convnext_atto,
    "gru2": gru2,
    "squeezenet1_1": squeezenet1_1,
    "mobilenet_v2": mobilenet_v2,
    "opt": opt,
    "densenet121": densenet121,
    "regnet_y_400mf": regnet_y_400mf,
    "mnasnet0_5": mnasnet0_5,
    "googlenet": googlenet,
    "mixer_tiny": mixer_tiny,
    "poolformer_tiny": poolformer_tiny,
    "deit_tiny": deit_tiny,
    "llama": llama,
    "t5": t5,
    "roberta": roberta,
    "gpt_neo": gpt_neo,
    "bloom": bloom,
    "nn_transformer": nn_transformer,
    "conv1d_bigru": conv1d_bigru,
    "levit_128s": levit_128s,
    "mobilevit_xxs": mobilevit_xxs,
    "swin_tiny": swin_tiny,
    "mistral": mistral,
    "qwen2": qwen2,
    "albert": albert,
    "convbert": convbert,
    "beit": beit,
}
