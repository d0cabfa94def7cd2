"""rmapbench: compare the anonmm and anon_vma anon rmap schemes on Linux
6.1."""
