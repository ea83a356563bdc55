"""Which stack of its account holds each unit of the topology, and the commands that change it.

``units`` cuts an account into the pieces that move between stacks as one; ``plan_file`` is the
committed plan's form; ``plan`` builds exactly the stacks it records (what every synth, deploy
and gate uses); ``placing`` changes it on purpose; ``order`` orders the stacks' deploys;
``deployed`` reads what the organization holds and ``check`` compares an assembly with it;
``python -m stacks.placement`` runs the commands.
"""
