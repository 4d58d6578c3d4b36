"""A controller-runtime for Python.

This package is the framework the operator runs on: envtest (a real kube-apiserver + etcd for tests), and
— as later issues land — client, informers and cache, workqueues, controllers, manager, leader election and
the admission webhook server. It imports nothing from the rest of the project, so it can be lifted out as its
own library.
"""
