<?php

// Class to send emails
class Mailer
{
    // Declare the transport
    private $transport;

    // Constructor
    public function __construct($transport)
    {
        // Set the transport
        $this->transport = $transport;
    }

    // Function to send an email
    public function send($to, $subject, $body)
    {
        // Create the message
        $message = new Message($to, $subject, $body);
        // Send the message
        return $this->transport->send($message);
    }
}
