"""What a command reading files offers to choose from, in a module that imports nothing:
``offeval evaluate`` declares its arguments, and answers a mistake in them, without the
modules that read files (:mod:`offeval.data.files` uses these)."""

#: What a delimited text file's numbers may use as decimal mark.
DECIMALS = (",", ".")
