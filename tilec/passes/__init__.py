"""IR -> IR passes after the frontend: normalize, structure, autodiff, simplify, verify."""
