"""Each seed's experiment and table, one module per seed (seed000 ... seed004),
on the shared pieces of seeds.common; pagelab.reproduce runs them.
"""
