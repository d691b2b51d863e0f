# The channel to Python: a child process running dpstats.rpipe, its standard input and output two
# FIFOs in a directory only this user can open (removed once both ends are open). Frames, handles and
# the child's side: dpstats/rpipe.py. When R exits, the child reads the end of its input and exits.

# Run by `python -c`: a "dpstats" directory in the working directory (e.g. R CMD check's installed
# copy of this package) would be imported as an empty namespace package, so the working directory
# leaves sys.path then; a Python without dpstats, or with one older than this package, says so on
# the channel.
.dp_boot <- "import importlib.util as u, json, os, struct, sys
s = u.find_spec('dpstats')
if s is not None and s.origin in (None, 'namespace'):
    c = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ('', '.', c)]
try:
    from dpstats.rpipe import main
except Exception as e:
    n = getattr(e, 'name', None)
    m = json.dumps({'ok': False, 'missing': n == 'dpstats', 'old': n == 'dpstats.rpipe',
                    'error_message': '%s: %s' % (type(e).__name__, e), 'python': sys.executable}).encode()
    sys.stdout.buffer.write(struct.pack('<dd', len(m), 0) + m)
    sys.exit(1)
sys.exit(main(sys.argv[1:]))"

.dp_private_dir <- function() {
  dir <- tempfile("dpstats-channel-")  # inside R's session directory, itself 0700
  if (!dir.create(dir, mode = "0700")) {
    .dp_abort(sprintf("cannot create the directory %s for the channel to Python.", dir), "dpstats_channel_error")
  }
  Sys.chmod(dir, "0700", use_umask = FALSE)
  dir
}

# Start `py` serving dpstats.rpipe; the channel (an environment) once it has said hello.
.dp_start <- function(py, dir = .dp_private_dir()) {
  if (.Platform$OS.type != "unix") {
    .dp_abort("the R package reaches Python through FIFOs, which need a Unix-alike (Linux, macOS).",
              "dpstats_python_missing_error")
  }
  on.exit(unlink(dir, recursive = TRUE))
  fifos <- file.path(dir, c("in", "out"))
  for (f in fifos) close(fifo(f, "w+b"))  # creates the FIFO; opening it read-write does not wait
  system(sprintf("%s -c %s %s %d < %s > %s &", shQuote(py), shQuote(.dp_boot), shQuote(dir), Sys.getpid(),
                 shQuote(fifos[1]), shQuote(fifos[2])))
  ch <- new.env(parent = emptyenv())
  ch$python <- py
  ch$dir <- dir
  ch$r_pid <- Sys.getpid()
  ch$to <- fifo(fifos[1], "wb", blocking = TRUE)  # both wait for the shell's redirections, in this order
  ch$from <- fifo(fifos[2], "rb", blocking = TRUE)
  hello <- tryCatch(.dp_parse(.dp_receive(ch)$header), dpstats_eof = function(e) NULL)
  if (!isTRUE(hello$ok)) .dp_refused(ch, hello)
  ch$pid <- hello$pid
  ch$executable <- hello$python  # sys.executable, as the child sees itself
  ch$session <- new.env(parent = emptyenv())  # handles made now hold this environment (see .dp_alive)
  ch$session$token <- hello$token
  ch
}

.dp_refused <- function(ch, hello) {
  .dp_close(ch)
  if (is.null(hello)) {
    .dp_abort(sprintf("Python at '%s' cannot be started from R: it stopped before answering (see its messages above).",
                      ch$python), "dpstats_python_missing_error")
  }
  if (isTRUE(hello$old)) {
    .dp_abort(sprintf("the Python package 'dpstats' of %s is older than this R package (it has no dpstats.rpipe); update it with install_dpstats(), or set DPSTATS_PYTHON to a Python with a current dpstats.",
                      hello$python), "dpstats_missing_error")
  }
  if (isTRUE(hello$missing) || is.null(hello$error_classes)) {
    detail <- if (isTRUE(hello$missing)) "" else sprintf(" (importing it failed: %s)", hello$error_message)
    .dp_abort(sprintf("the Python package 'dpstats' is not installed for %s%s; run install_dpstats() or set DPSTATS_PYTHON to a Python that has it.",
                      hello$python, detail), "dpstats_missing_error")
  }
  .dp_abort(hello$error_message, unlist(hello$error_classes))
}

# The child ends when its input closes; `kill` stops it at once (an interrupted call).
.dp_close <- function(ch, kill = FALSE) {
  for (con in list(ch$to, ch$from)) if (!is.null(con)) try(close(con), silent = TRUE)
  if (kill && !is.null(ch$pid)) try(tools::pskill(ch$pid), silent = TRUE)
  if (identical(.dp_env$channel, ch)) .dp_env$channel <- NULL
  invisible(NULL)
}

# ---- frames: 2 + k little-endian doubles (header length, k, attachment lengths), the JSON header,
# the attachments.

.dp_send <- function(ch, header, blobs) {
  json <- charToRaw(enc2utf8(header))
  sizes <- vapply(blobs, function(b) if (is.raw(b)) length(b) else 8 * sum(lengths(b)), numeric(1))
  writeBin(as.double(c(length(json), length(blobs), sizes)), ch$to, endian = "little")
  writeBin(json, ch$to)
  for (b in blobs) {
    if (is.raw(b)) writeBin(b, ch$to) else for (column in b) writeBin(column, ch$to, endian = "little")
  }
  flush(ch$to)
}

.dp_receive <- function(ch) {
  head <- readBin(.dp_read(ch, 16), "double", 2, endian = "little")
  lens <- if (head[2] > 0) readBin(.dp_read(ch, 8 * head[2]), "double", head[2], endian = "little") else numeric()
  list(header = .dp_read(ch, head[1]), blobs = lapply(lens, function(n) .dp_read(ch, n)))
}

# A FIFO read returns what the pipe holds (up to 1 MiB): read until n bytes have come.
.dp_read <- function(ch, n) {
  out <- readBin(ch$from, "raw", n)
  if (length(out) == n) return(out)
  chunks <- list(out)
  got <- length(out)
  while (got < n) {
    more <- readBin(ch$from, "raw", n - got)
    if (!length(more)) stop(errorCondition("end of the channel", class = "dpstats_eof"))
    chunks[[length(chunks) + 1L]] <- more
    got <- got + length(more)
  }
  unlist(chunks)
}

.dp_utf8 <- function(bytes) {
  s <- rawToChar(bytes)
  Encoding(s) <- "UTF-8"
  s
}

.dp_parse <- function(bytes) jsonlite::parse_json(.dp_utf8(bytes), simplifyVector = FALSE)

# ---- requests

# One request and its response. An interrupt in between leaves the child out of step: it is stopped,
# and the next call starts another.
.dp_request <- function(op, args) {
  ch <- .dp_ensure()
  released <- .dp_env$released
  .dp_env$released <- NULL
  blobs <- new.env(parent = emptyenv())
  blobs$list <- list()
  header <- sprintf('{"op":%s,"args":%s,"release":%s}', .json_string(op), .to_json(args, blobs),
                    .to_json(as.list(released), blobs))
  finished <- FALSE
  on.exit(if (!finished) .dp_close(ch, kill = TRUE))
  resp <- tryCatch({
    .dp_send(ch, header, blobs$list)
    .dp_receive(ch)
  }, error = identity)
  finished <- TRUE
  if (inherits(resp, "error")) .dp_stopped(ch, resp)
  list(header = .dp_parse(resp$header), blobs = resp$blobs)
}

.dp_stopped <- function(ch, e) {
  .dp_close(ch)
  .dp_abort(sprintf(paste("Python (pid %s, %s) stopped during this call (%s); its fits and accountants are gone.",
                          "The next call starts Python again."), ch$pid, ch$python, conditionMessage(e)),
            c("dpstats_python_stopped_error", "dpstats_python_missing_error"))
}

.dp_value <- function(resp) {
  h <- resp$header
  if (!isTRUE(h$ok)) .dp_abort(h$error_message, unlist(h$error_classes))
  if (length(resp$blobs)) .dp_attach(h$value, resp$blobs) else h$value
}

# {"$dpstats": ["raw", i]} in a response: attachment i
.dp_attach <- function(x, blobs) {
  if (!is.list(x)) return(x)
  if (identical(names(x), "$dpstats")) return(blobs[[x[[1]][[2]] + 1L]])
  x[] <- lapply(x, .dp_attach, blobs = blobs)
  x
}

# The bridge as the R code sees it: dpstats.rbridge's functions, called over the channel.
.dp_bridge <- function() {
  b <- new.env(parent = emptyenv())
  b$call_from_r <- function(name, positional = list(), kwargs = list(), frames = list(), target = NULL) {
    resp <- .dp_request("call_from_r", list(name, positional, kwargs, frames, target))
    h <- resp$header
    list(ok = isTRUE(h$ok), json = if (length(resp$blobs)) .dp_utf8(resp$blobs[[1]]) else "",
         object = .dp_handle(h$object), warnings = h$warnings, error_classes = h$error_classes,
         error_message = h$error_message)
  }
  b$has_function <- function(name) isTRUE(.dp_value(.dp_request("has_function", list(name))))
  b$has_method <- function(object, name) isTRUE(.dp_value(.dp_request("has_method", list(object, name))))
  b$echo <- function(...) .restore_inf(.dp_value(.dp_request("echo", list(...))))
  class(b) <- "dp_bridge"
  b
}

# ---- handles: a Python object the child keeps. A handle is alive while it holds the session of the
# running child: a reloaded copy (saveRDS) holds a copy of it, one made before a restart an older one.

.dp_handle <- function(h) {
  if (is.null(h)) return(NULL)
  ref <- new.env(parent = emptyenv())
  ref$id <- h$id
  ref$type <- h$type
  ref$session <- .dp_env$channel$session
  reg.finalizer(ref, .dp_release)
  class(ref) <- "dp_handle"
  ref
}

.dp_alive <- function(ref) {
  inherits(ref, "dp_handle") && !is.null(.dp_env$channel) && identical(ref$session, .dp_env$channel$session)
}

.dp_release <- function(ref) {
  if (.dp_alive(ref)) .dp_env$released <- c(.dp_env$released, ref$id)
}

# The messages a fit and an accountant have always given.
.dp_stale <- function(type = NULL) {
  msg <- if (identical(type, "Accountant")) {
    "this accountant's Python object is gone (saved and reloaded, or R restarted)."
  } else {
    "this fit's Python object is gone (the fit was saved and reloaded, or R restarted); refit to use predict() or report()."
  }
  .dp_abort(msg, "dpstats_stale_error")
}

# ---- R values as JSON the way reticulate converted them: a length-one vector is a scalar, a longer
# one an array, a named list an object, NULL null; doubles stay floats (5 is 5.0) with every bit kept
# (17 digits), NaN/NA and infinities are JSON's NaN and Infinity (Python reads them). Raw vectors
# and columns of doubles (.as_doubles) travel as attachments, handles and the bridge as references.

.to_json <- function(x, blobs) {
  if (is.null(x)) return("null")
  if (inherits(x, "dp_handle")) {
    if (!.dp_alive(x)) .dp_stale(x$type)
    return(sprintf('{"$dpstats":["handle",%s,%s]}', x$id, .json_string(x$session$token)))
  }
  if (inherits(x, "dp_bridge")) return('{"$dpstats":["bridge"]}')
  if (is.raw(x) || inherits(x, "dp_doubles")) {
    blobs$list[[length(blobs$list) + 1L]] <- x
    return(sprintf('{"$dpstats":["raw",%d]}', length(blobs$list) - 1L))
  }
  if (is.list(x)) return(.json_list(x, blobs))
  if (!is.atomic(x)) {
    .dp_abort(sprintf("a value of class '%s' cannot be sent to Python.", class(x)[1]), "dpstats_argument_error")
  }
  v <- .json_atoms(x)
  if (length(x) == 1L) v else paste0("[", paste(v, collapse = ","), "]")
}

.json_list <- function(x, blobs) {
  nm <- names(x)
  scalars <- is.null(nm) && length(x) > 1L && all(lengths(x) == 1L) &&
    all(vapply(x, function(e) is.atomic(e) && is.null(attributes(e)), NA)) &&
    length(unique(vapply(x, typeof, ""))) == 1L
  if (scalars) return(paste0("[", paste(.json_atoms(unlist(x)), collapse = ","), "]"))  # as.list(names)
  parts <- vapply(x, .to_json, "", blobs = blobs, USE.NAMES = FALSE)
  if (is.null(nm)) return(paste0("[", paste(parts, collapse = ","), "]"))
  if (!length(x)) return("{}")
  paste0("{", paste0(.json_string(nm), ":", parts, collapse = ","), "}")
}

.json_atoms <- function(x) {
  if (is.factor(x)) x <- as.character(x)
  if (is.character(x)) return(.json_string(x))
  if (is.double(x)) return(.json_doubles(x))
  out <- switch(typeof(x), logical = ifelse(x, "true", "false"), integer = as.character(x),
    .dp_abort(sprintf("a vector of type '%s' cannot be sent to Python.", typeof(x)), "dpstats_argument_error"))
  out[is.na(x)] <- "null"
  out
}

.json_doubles <- function(x) {
  v <- sprintf("%.17g", x)
  whole <- !grepl("[.eIN]", v)
  v[whole] <- paste0(v[whole], ".0")
  v[is.na(x)] <- "NaN"  # NA_real_ too, as reticulate sent it
  v[x %in% Inf] <- "Infinity"
  v[x %in% -Inf] <- "-Infinity"
  v
}

.json_string <- function(s) {
  s <- enc2utf8(as.character(s))
  out <- gsub("([\"\\\\])", "\\\\\\1", s, perl = TRUE)
  out <- gsub("\n", "\\n", gsub("\r", "\\r", gsub("\t", "\\t", out, fixed = TRUE), fixed = TRUE), fixed = TRUE)
  out <- paste0("\"", out, "\"")
  ctl <- !is.na(s) & grepl("[\001-\037]", out, perl = TRUE)
  if (any(ctl)) out[ctl] <- vapply(s[ctl], function(z) as.character(jsonlite::toJSON(z, auto_unbox = TRUE)), "")
  out[is.na(s)] <- "null"
  out
}
