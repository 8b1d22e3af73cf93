[[define "deploy"]]
# `make streams` creates the job's streams over NATS at PLATFORM_NATS, and
# `make deploy` uploads the module to the platform at PLATFORM_SERVER
# (default http://127.0.0.1:8080; PLATFORM_API_TOKEN when it has
# authentication on) and submits job.yaml with the module's id in place of
# ${MODULE}.
PLATFORM_NATS ?= nats://127.0.0.1:4222

.PHONY: streams deploy
streams:
	$(PLATFORM_CLI) stream add [[.Stream]]_IN --subjects '[[.Name]].in' --nats $(PLATFORM_NATS)
	$(PLATFORM_CLI) stream add [[.Stream]]_OUT --subjects '[[.Name]].out' --nats $(PLATFORM_NATS)

deploy: $(OUT)
	module=$$($(PLATFORM_CLI) module push $(OUT) -o id) && \
	sed 's/\$${MODULE}/'"$$module"'/' job.yaml | $(PLATFORM_CLI) job submit -
[[end]]
