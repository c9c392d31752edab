if __name__ == "__main__":
    # Imported under the guard: spawned children re-import this module as
    # __mp_main__, and only the scheduler should pay for importing torch.
    from examples.serving_app.launcher import main
    from examples.serving_app.lifecycle import exit_now

    exit_now(main())  # returned: the server processes are already stopped
