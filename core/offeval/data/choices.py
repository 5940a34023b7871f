"""What a command reading files offers to choose from, in a module that imports nothing (so
``offeval evaluate`` checks its arguments without the modules that read files)."""

#: What a delimited text file's numbers may use as decimal mark.
DECIMALS = (",", ".")
