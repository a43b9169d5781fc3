;;; test.el --- batch Emacs + Eglot drive codesift through editors/emacs/codesift.el  -*- lexical-binding: t; -*-
;; Env: CODESIFT_EL (the snippet), CODESIFT_CMD (JSON list), CODESIFT_WS (workspace).
;; Prints one JSON object on stdout; exits non-zero on a timeout.

(require 'json)
(load (getenv "CODESIFT_EL") nil t)

(setq codesift-command (json-parse-string (getenv "CODESIFT_CMD") :array-type 'list)
      codesift-settings '(:search (:semanticWeight 0.9)))
(codesift-register)

(defvar codesift-test-out nil "Alist printed as JSON at the end.")
(defvar codesift-test-messages nil "Every message shown, newest first.")
(advice-add 'message :filter-return
            (lambda (text) (when (stringp text) (push text codesift-test-messages)) text))
(defun codesift-test-put (key value) (push (cons key value) codesift-test-out))
(defun codesift-test-finish (code)
  (princ (concat (json-encode codesift-test-out) "\n"))
  (let ((server (ignore-errors (eglot-current-server))))
    (when server (ignore-errors (eglot-shutdown server))))
  (kill-emacs code))

(defun codesift-test-wait (seconds predicate)
  "Poll PREDICATE (errors count as nil) for up to SECONDS; its last value."
  (let ((deadline (+ (float-time) seconds)) (got nil))
    (while (and (not (setq got (ignore-errors (funcall predicate))))
                (< (float-time) deadline))
      (accept-process-output nil 0.2))
    got))

(let* ((root (file-name-as-directory (getenv "CODESIFT_WS")))
       (file (expand-file-name "app/auth.py" root)))
  (find-file file)
  (codesift-test-put 'mode (symbol-name major-mode))
  (apply #'eglot (eglot--guess-contact))
  (unless (codesift-test-wait 60 (lambda () (eglot-current-server)))
    (codesift-test-finish 2))
  (let ((server (eglot-current-server)))
    (codesift-test-put 'server (plist-get (eglot--server-info server) :name))
    ;; Go to Symbol in Workspace: the symbol table is ready after the text phase.
    (let ((symbols (codesift-test-wait
                    120 (lambda ()
                          (let ((r (jsonrpc-request server :workspace/symbol '(:query "AuthService"))))
                            (and (> (length r) 0) r))))))
      (unless symbols (codesift-test-finish 3))
      (codesift-test-put 'symbols
                         (mapcar (lambda (s)
                                   (list (cons 'name (plist-get s :name))
                                         (cons 'uri (plist-get (plist-get s :location) :uri))))
                                 symbols)))
    ;; M-x codesift-search → *codesift* in grep-mode → jump to the first hit.
    (let ((buffer (codesift-test-wait
                   120 (lambda () (codesift-search "parse the JSON configuration")))))
      (unless buffer (codesift-test-finish 4))
      (codesift-test-put 'search (with-current-buffer buffer (buffer-string)))
      (select-window (get-buffer-window buffer))
      (goto-char (point-min))
      (compilation-next-error 1)
      (compile-goto-error)
      (codesift-test-put 'jumped (list (cons 'file (buffer-file-name (window-buffer)))
                                       (cons 'line (with-current-buffer (window-buffer)
                                                     (line-number-at-pos (window-point)))))))
    (set-buffer (find-file-noselect file))
    (let ((grep (codesift-grep "retry_upload")))
      (codesift-test-put 'grep (and grep (with-current-buffer grep (buffer-string)))))
    (codesift-test-put 'grep_empty (and (null (codesift-grep "zebra_pattern_nowhere"))
                                        (car codesift-test-messages)))
    ;; M-x codesift-status once the vectors are in.
    (codesift-test-put 'status (codesift-test-wait
                                120 (lambda () (let ((s (codesift-status)))
                                                 (and (string-match-p "idle" s) s)))))
    (codesift-test-put 'reindex (codesift-reindex))
    (codesift-test-put 'messages (reverse codesift-test-messages))))
(codesift-test-finish 0)
