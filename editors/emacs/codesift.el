;;; codesift.el --- codesift hybrid code search through Eglot  -*- lexical-binding: t; -*-

;; Needs: Emacs 28+, Eglot 1.9+ (Debian: emacs-nox elpa-eglot).
;; Keywords: tools, languages

;;; Commentary:

;; Registers `codesift serve' with Eglot for the modes in `codesift-modes' and
;; adds four commands that call the server's workspace/executeCommand:
;;
;;   M-x codesift-search    hybrid search; results in a grep-mode buffer (RET jumps)
;;   M-x codesift-grep      exact grep, one line per match
;;   M-x codesift-status    what the index holds
;;   M-x codesift-reindex   index the workspace again
;;
;; Go to Symbol in Workspace (`xref-find-apropos'), call hierarchy and
;; implementations come through Eglot itself.
;;
;;   (add-to-list 'load-path "/path/to/codesift/editors/emacs")
;;   (require 'codesift)
;;   (codesift-register)                ; then M-x eglot in a file of the project
;;
;; Eglot 1.9 runs one server per buffer: for the modes listed here codesift
;; takes the place of the default server (pylsp, gopls...).

;;; Code:

(require 'eglot)
(require 'seq)
(require 'grep)
(require 'jsonrpc)
(require 'project)
(require 'subr-x)

(defgroup codesift nil
  "Hybrid code search through the codesift language server."
  :group 'tools)

(defcustom codesift-command '("codesift" "serve")
  "Command that starts the codesift language server."
  :type '(repeat string))

(defcustom codesift-modes
  '(python-mode js-mode typescript-mode go-mode rust-mode java-mode
    c-mode c++-mode csharp-mode swift-mode kotlin-mode)
  "Major modes whose buffers Eglot connects to codesift."
  :type '(repeat symbol))

(defcustom codesift-settings nil
  "Server settings as a plist, camelCase by section.
Sent as initializationOptions, e.g. (:search (:semanticWeight 0.9)
:index (:exclude [\"vendor/\"])).  Nil: the defaults and the
project's .codesift.toml."
  :type 'sexp)

(defun codesift-contact ()
  "The Eglot contact for codesift: the command plus initializationOptions."
  (append codesift-command
          (when codesift-settings
            (list :initializationOptions codesift-settings))))

;;;###autoload
(defun codesift-register ()
  "Make Eglot use codesift for `codesift-modes' (ahead of its defaults)."
  (setq eglot-server-programs
        (cons (cons codesift-modes (codesift-contact))
              (seq-remove (lambda (entry) (equal (car entry) codesift-modes))
                          eglot-server-programs))))

(defun codesift--server ()
  "The Eglot server of this buffer, or an error saying how to start one."
  (or (eglot-current-server)
      (user-error "codesift: no Eglot server here; run M-x eglot in a file of the project (after `codesift-register')")))

(defun codesift--execute (command args)
  "Run codesift COMMAND with the argument object ARGS (a plist)."
  (jsonrpc-request (codesift--server) :workspace/executeCommand
                   (list :command command
                         :arguments (vector (or args (make-hash-table))))))

(defun codesift--root ()
  "Root folder of the current project."
  (let ((project (project-current)))
    (if project (project-root project) default-directory)))

(defun codesift--first-line (text)
  "First non-blank line of TEXT, trimmed."
  (or (seq-find (lambda (l) (not (string-empty-p l)))
                (mapcar #'string-trim (split-string (or text "") "\n")))
      ""))

(defun codesift--show (title root lines why)
  "Show LINES (\"path:line:col: text\") under TITLE in *codesift*, or WHY when empty.
Paths are relative to ROOT.  Returns the buffer, or nil when there was nothing."
  (if (null lines)
      (progn (message "codesift: %s" why) nil)
    (let ((buffer (get-buffer-create "*codesift*")))
      (with-current-buffer buffer
        (let ((inhibit-read-only t))
          (erase-buffer)
          (setq default-directory root)
          (insert title "\n\n")
          (dolist (line lines) (insert line "\n")))
        (grep-mode)
        (goto-char (point-min)))
      (display-buffer buffer)
      buffer)))

(defun codesift--notes (notes)
  "NOTES (a vector of strings) joined with \"; \"."
  (mapconcat #'identity (append notes nil) "; "))

;;;###autoload
(defun codesift-search (query)
  "Hybrid search for QUERY; results in *codesift* (RET on a line jumps to it)."
  (interactive "sSearch: ")
  (let* ((result (codesift--execute "codesift.search" (list :query query)))
         (report (plist-get result :report))
         (lines
          (mapcar (lambda (hit)
                    (let ((start (plist-get (plist-get (plist-get hit :location) :range) :start)))
                      (format "%s:%d:1: %s [%s]"
                              (plist-get hit :path)
                              (1+ (plist-get start :line))
                              (codesift--first-line (plist-get hit :text))
                              (mapconcat #'identity (plist-get hit :sources) ", "))))
                  (plist-get result :hits))))
    (codesift--show (format "codesift search: %s (%d hits in %d files)"
                            query (length lines) (or (plist-get report :uniqueFiles) 0))
                    (codesift--root) lines
                    (string-join (cons (format "no results for %S" query)
                                       (append (plist-get report :notes) nil))
                                 ": "))))

;;;###autoload
(defun codesift-grep (pattern)
  "Exact grep for PATTERN; one line per match in *codesift*."
  (interactive "sGrep: ")
  (let* ((result (codesift--execute "codesift.grep" (list :pattern pattern)))
         (lines nil))
    (seq-doseq (passage (plist-get result :passages))
      (let ((text (split-string (plist-get passage :text) "\n"))
            (first (plist-get passage :startLine))
            (seen nil))
        (seq-doseq (match (plist-get passage :matches))
          (let* ((start (plist-get (plist-get match :range) :start))
                 (line (1+ (plist-get start :line))))
            (unless (memq line seen)
              (push line seen)
              (push (format "%s:%d:%d: %s" (plist-get passage :path) line
                            (1+ (plist-get start :character))
                            (string-trim (or (nth (- line first) text) "")))
                    lines))))))
    (codesift--show (format "codesift grep: %s" pattern) (codesift--root) (nreverse lines)
                    (string-join (cons (format "no match for %S" pattern)
                                       (append (plist-get result :reasons) nil))
                                 ": "))))

;;;###autoload
(defun codesift-status ()
  "Say what each project's index holds."
  (interactive)
  (let ((result (codesift--execute "codesift.status" nil)))
    (message "codesift: %s"
             (mapconcat
              (lambda (p)
                (format "%s: %s, %d files, %d chunks, vectors %d/%d"
                        (file-name-nondirectory (directory-file-name (plist-get p :root)))
                        (plist-get p :activity)
                        (plist-get p :filesIndexed) (plist-get p :chunks)
                        (plist-get p :vectorsDone)
                        (+ (plist-get p :vectorsDone) (plist-get p :vectorsPending))))
              (plist-get result :projects) "; "))))

;;;###autoload
(defun codesift-reindex ()
  "Index the workspace again."
  (interactive)
  (let ((result (codesift--execute "codesift.reindex" nil)))
    (message "codesift: re-indexing %s" (codesift--notes (plist-get result :queued)))))

(provide 'codesift)
;;; codesift.el ends here
