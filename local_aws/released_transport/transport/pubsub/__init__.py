"""Native publish/subscribe on SNS: topic names, the topic cache and look-ups, subscribing an
input queue, and the queue policy that admits the subscribed topics."""
