"""Where a trained ADDMOD run's programs fail on held-out primes: on the pairs
whose operands and answer a nearby training modulus also shows, or on the
pairs that use values only larger training moduli show.

  python -m experiments.analyze_reach --workdir=WORKDIR --model=meta_mlp \\
      [--primes=53,71,83,89] [--out=reach.json]

For a held-out prime p its reach r is the largest training modulus below p
(`analysis.clock.reach`). A pair (a, b) of p with a, b and y = (a + b) mod p
all <= r uses only token values and answers that r's programs use too; a pair
with one of them above r uses values that, in training, only the moduli above
p show, so a program for p can get them right only if the hypernetwork
carries those rows of W_E and of the unembedding from those moduli to p. For
every seed of `model` and every shown prime this prints the exact match on
all p^2 pairs, on the pairs within reach and on those beyond it
(`clock.program_reach`), and the share of pairs beyond: 1 - that share is the
accuracy of a program that gets every pair beyond reach wrong and every
other right.

An analysis of a run already scored: the default primes are its validation
and OOD primes, whose accuracy the run's own evaluation has read; it chooses
nothing. Hypernetworks only (the direct model emits no program).
"""

from absl import app
from absl import flags

from experiments.pipelines import clock_report, reach_report
from neuroprog.run import logs

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained ADDMOD workdir.")
_MODEL = flags.DEFINE_string("model", "meta_mlp", "The hypernetwork to analyse.")
_STEP = flags.DEFINE_integer("step", None, "A checkpoint step (default: the newest).")
_PRIMES = flags.DEFINE_list("primes", None, "Held-out primes to show (default: the run's "
                            "validation and OOD primes).")
_OUT = flags.DEFINE_string("out", None, "Optional JSON output path.")
flags.mark_flags_as_required(["workdir"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logs.setup_from_flags()
  result = reach_report.analyze(_WORKDIR.value, _MODEL.value, _STEP.value, _PRIMES.value)
  clock_report.print_and_write(result, reach_report.markdown(result), _OUT.value)


if __name__ == "__main__":
  app.run(main)
